import os from 'node:os'

// The forks of the parallel project run below the processes lane (vitest.config.ts): that lane is
// one file at a time and the longest chain of the run, so a core it waits for lengthens the whole
// run, while the forks have work queued to fill any core it leaves idle. Only the fork itself is
// lowered; its queries run in Postgres backends at the usual priority.
os.setPriority(10)
