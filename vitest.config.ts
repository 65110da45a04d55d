import fs from 'node:fs'
import os from 'node:os'
import { defineConfig } from 'vitest/config'

// Files that start processes: servers and CLI commands as child processes (the built CLI, which
// test/global-setup.ts builds for this project), npm, a second checkout, several servers on one
// database. One at a time (they share the machine's cores with their children), beside the files
// that run side by side.
const PROCESS_FILES = [
  'test/cli/**/*.test.ts',
  'test/multi-process/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/jobs/cleanup.test.ts',
  'test/jobs/crash-recovery.test.ts',
]

// Files that measure a deadline or a hand-over on the server's own clock (slow bodies, request and
// upload deadlines, waits for a connection, the one-second slot of a stuck receiver, a read's
// statement timeout): a neighbour's load would move what they measure, so they run one at a time in
// the processes lane, whose thread keeps the normal priority while the forks run below it
// (test/lower-priority.ts). Run alone after everything else, they left the machine three quarters
// idle for the last 30 s of the run (with 4 forks on 2 cores: 275 s, and 265 s in the lane, 2026-11-28).
// Their deadlines leave room for that load: 1 s for an honest two-row upload, not 300 ms.
const TIMING_FILES = [
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

// Files that replace a module (vi.mock): a project of their own, and vitest starts a new process for
// each single-fork project, so no other file shares the replaced module.
const MOCKING_FILES = ['test/feeds/feed-writer-disk-failure.test.ts']

// Every other file has its own database, cloned from a migrated template (test/global-setup.ts), its
// own app and no fixed port, so files run side by side: one fork per core (at least 2, at most 8),
// beside the processes lane. More forks than cores cost more CPU than the waits they fill: every app
// polls in the background (its run, push and webhook workers) for as long as its file runs, and a
// file stretched by its neighbours polls longer. On 2 cores, with every other setting equal, 4 forks
// took 265 s and 524 s of CPU, 3 forks 246 s and 477 s, 2 forks 228 to 242 s and 410 to 439 s
// (2026-11-28). TEST_FORKS overrides.
const forks = Number(process.env.TEST_FORKS ?? Math.min(8, Math.max(2, cores())))

/** The cores this run may use: the CPUs it may run on, or fewer where a cgroup (v2) quota says so, as in a container. */
function cores(): number {
  const available = os.availableParallelism()
  try {
    const [quota, period] = fs.readFileSync('/sys/fs/cgroup/cpu.max', 'utf8').trim().split(' ')
    const limit = Math.ceil(Number(quota) / Number(period))
    return Number.isFinite(limit) && limit > 0 ? Math.min(available, limit) : available
  } catch {
    return available
  }
}

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    maxWorkers: forks,
    // As many at the least as at the most: tinypool stops an idle fork when there are more than the
    // least, and with forks that keep their modules it could stop one twice (a second idle timer),
    // which ended the whole run with an unhandled "Terminating worker thread".
    minWorkers: forks,
    poolOptions: {
      // The process files run in the threads pool, one thread: vitest runs each pool of a group at the
      // same time, so they overlap the forks instead of waiting for them. Two threads ended them 35 s
      // before the forks instead of 40 s after, but three servers beside another process file's long
      // export once took over a minute for four small scheduled runs (CI, 2026-11-26).
      // The lane's thread keeps its modules from one file to the next, as the forks do (below): 11 s of
      // CPU less for its 21 files.
      threads: { maxThreads: 1, minThreads: 1, isolate: false },
      // A fork keeps its modules from one file to the next, as the server does from one request to the
      // next: loading the app's modules took about 3 s of CPU per file, a third of the suite's CPU. Every
      // file builds its own app and database (test/helpers/test-app.ts), so no state passes between them.
      // Set here, not per project: vitest reads it from the root for the whole forks pool.
      forks: { isolate: false },
    },
    // Generous: a file's tests share the cores with the other forks, the processes lane and their children.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          pool: 'forks',
          include: ['test/**/*.test.ts'],
          exclude: [...PROCESS_FILES, ...TIMING_FILES, ...MOCKING_FILES],
          setupFiles: ['test/lower-priority.ts'],
        },
      },
      { extends: true, test: { name: 'processes', pool: 'threads', include: [...PROCESS_FILES, ...TIMING_FILES] } },
      {
        extends: true,
        test: {
          name: 'mocking',
          pool: 'forks',
          include: MOCKING_FILES,
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
