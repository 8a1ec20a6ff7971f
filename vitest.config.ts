import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // werift/opus native modules misbehave when worker threads exit: keep tests in forks.
    pool: 'forks',
    include: ['signaling/**/*.test.ts', 'session/**/*.test.ts', 'media/**/*.test.ts', 'client/**/*.test.ts', 'bench/**/*.test.ts', 'deploy/**/*.test.ts', 'docs/**/*.test.ts'],
    testTimeout: 20000,
    hookTimeout: 30000,
    env: { LOG_LEVEL: 'silent' },
    // `npx vitest run --coverage`: line coverage of the shipped code (tests and their kits aside).
    coverage: {
      provider: 'v8',
      include: ['media/**/*.ts', 'session/**/*.ts', 'signaling/**/*.ts', 'client/src/**/*.ts'],
      exclude: ['**/*.test.ts', '**/testing/**', '**/e2e/**'],
      reporter: ['text-summary', 'json-summary'],
      reportOnFailure: true,
      reportsDirectory: 'node_modules/.cache/coverage',
    },
  },
});
