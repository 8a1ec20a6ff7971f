import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // werift/opus native modules misbehave when worker threads exit: keep tests in forks.
    pool: 'forks',
    testTimeout: 20000,
    hookTimeout: 30000,
    env: { LOG_LEVEL: 'silent' },
    projects: [
      {
        // The session core's unit ring (recording transport, fake providers, fake clock) shares
        // one fork: its files leave no server or socket behind, and a fresh fork per file cost
        // about a third of its wall time (47 → 32 s for 45 files, side by side).
        extends: true,
        test: { name: 'unit', include: ['session/**/*.test.ts'], exclude: ['session/e2e/**'], isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'wire',
          include: ['signaling/**/*.test.ts', 'session/e2e/**/*.test.ts', 'media/**/*.test.ts', 'client/**/*.test.ts', 'bench/**/*.test.ts', 'deploy/**/*.test.ts', 'docs/**/*.test.ts'],
        },
      },
    ],
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
