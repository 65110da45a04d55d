import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Each file gets its own database cloned from a migrated template, so files could run in parallel;
    // they run one at a time, on any machine, because one file already keeps both of CI's two cores
    // busy (its app, Postgres backends, child servers), and the deadline and slow-body tests need the
    // time they measure to be theirs. vitest's default would be (cores - 1): 1 on CI, 15 elsewhere.
    fileParallelism: true,
    poolOptions: { forks: { minForks: 1, maxForks: 1 } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
