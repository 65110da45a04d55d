import { defineConfig } from 'vitest/config'

// Files that must have the machine to themselves, one at a time, after the others:
// - process files start servers and CLI commands as child processes (and npm, and a second checkout);
// - multi-server files run several servers on one database;
// - timing files measure a deadline or a hand-over on the server's own clock (slow bodies, request
//   and upload deadlines, waits for a connection, the one-second slot of a stuck receiver, a read's
//   statement timeout), which a neighbour's load would move.
const SERIAL = [
  'test/cli/**/*.test.ts',
  'test/multi-process/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/jobs/cleanup.test.ts',
  'test/jobs/crash-recovery.test.ts',
  'test/stream-api/slow-body.test.ts',
  'test/stream-api/request-timeout.test.ts',
  'test/stream-api/database-waits.test.ts',
  'test/stream-api/upload-fair-share.test.ts',
  'test/streams/upload-deadline.test.ts',
  'test/net/send-slots.test.ts',
  'test/webhooks/stuck-receivers.test.ts',
  'test/webhooks/open-attempts-limit.test.ts',
  'test/channels/push-stuck-destinations.test.ts',
  'test/platform-api/wide-reads.test.ts',
]

// Every other file has its own database, cloned from a migrated template (test/global-setup.ts), its
// own app and no fixed port, so files run side by side. A file spends much of its time waiting (on
// Postgres, on a run's worker, on a receiver), so more forks than cores pay: TEST_FORKS overrides.
const forks = Number(process.env.TEST_FORKS ?? 4)

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    maxWorkers: forks,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'parallel', include: ['test/**/*.test.ts'], exclude: SERIAL } },
      // singleFork: vitest runs these one after another once the parallel files have ended.
      { extends: true, test: { name: 'serial', include: SERIAL, poolOptions: { forks: { singleFork: true } } } },
    ],
  },
})
