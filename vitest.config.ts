import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // werift/opus native modules misbehave when worker threads exit: keep tests in forks.
    pool: 'forks',
    include: ['signaling/**/*.test.ts', 'session/**/*.test.ts', 'media/**/*.test.ts', 'client/**/*.test.ts', 'bench/**/*.test.ts', 'deploy/**/*.test.ts', 'docs/**/*.test.ts'],
    testTimeout: 20000,
    hookTimeout: 30000,
    env: { LOG_LEVEL: 'silent' },
  },
});
