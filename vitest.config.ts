import { defineConfig } from 'vitest/config';

/**
 * Test files whose checks ride on real-time timing: gaps in paced downlink audio while Silero,
 * pocketsphinx and flite work beside it, WebRTC peers, a browser playing what it hears. They
 * run after everything else, one file at a time, so no other test competes with them for the 2
 * cores; the rest runs two files at a time (most of it waits on sockets and child processes).
 * The other voice files over the socket check what was heard and said, not when, so they run
 * with the rest.
 */
const realtime = [
  'session/e2e/voice-barge-in.test.ts',
  'signaling/webrtc/**/*.test.ts',
  'media/webrtc/worker-peer.test.ts',
  'media/silero-vad.test.ts',
  'client/e2e/**/*.test.ts',
];

export default defineConfig({
  test: {
    // werift/opus native modules misbehave when worker threads exit: keep tests in forks.
    pool: 'forks',
    maxWorkers: 2,
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
        // The session's end-to-end files each start their own servers and stop them: they share
        // forks too, which spares each file ~1.2 s of imports (36 → 26 s for 14 files).
        extends: true,
        test: { name: 'session-e2e', include: ['session/e2e/**/*.test.ts'], exclude: realtime, isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'wire',
          include: ['signaling/**/*.test.ts', 'media/**/*.test.ts', 'client/**/*.test.ts', 'bench/**/*.test.ts', 'deploy/**/*.test.ts', 'docs/**/*.test.ts'],
          exclude: realtime,
        },
      },
      {
        extends: true,
        test: { name: 'realtime', include: realtime, maxWorkers: 1, sequence: { groupOrder: 1 } },
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
