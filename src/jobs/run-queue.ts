import { CompiledQuery } from 'kysely'
import PgBoss from 'pg-boss'
import type { Db, DbHandle } from '../db/database.js'

export const RUNS_QUEUE = 'site-runs'
/** How often a run whose attempt failed unexpectedly (or whose process died) is tried again. */
export const RUN_RETRIES = 1
export const ABANDONED_RUNS_QUEUE = 'site-runs-abandoned'

export interface RunQueueOptions {
  /** Runs this process executes at the same time. 0 makes a process that only queues. */
  concurrency: number
  pollingSeconds: number
  /** How long a run may take before pg-boss gives up on it: the backstop behind the heartbeat. */
  expireSeconds: number
  /** Runs of one account with a job at once (RUN_ACCOUNT_CONCURRENCY); default 1. */
  accountConcurrency?: number
}

export interface RunHandlers {
  /** Executes the run `pid`; resolves when it ended (success or failure), throws to have it retried. */
  run(job: RunJobData, jobId: string): Promise<void>
  /** The run failed on its last attempt (interrupted or thrown twice). */
  abandoned(job: RunJobData): Promise<void>
}

export interface RunJobData {
  pid: string
  /** The run's account: a job whose run has gone with its site still hands on the account's turn. */
  accountId: string
}

/**
 * pg-boss as the transport of site runs: a job exists only for a run that may start now (the run
 * store keeps the second, queued run of a site without a job until the first ends). That keeps
 * pg-boss's fetch from ever meeting a job it cannot start: with a `stately` queue keyed by site,
 * the oldest blocked job makes every fetch fail and stalls all other sites (pg-boss #535, #536).
 * Retry once, then the dead-letter queue, where the run is marked failed.
 */
export class RunQueue {
  private readonly boss: PgBoss
  private readonly workerIds: string[] = []
  readonly accountConcurrency: number

  constructor(
    db: Db,
    private readonly options: RunQueueOptions,
  ) {
    // pg-boss runs its statements through our pool: one set of connections, and `send` can join the
    // transaction that creates the run.
    this.boss = new PgBoss({ db: adapter(db), schedule: false, supervise: true, migrate: true, maintenanceIntervalSeconds: 30 })
    this.accountConcurrency = options.accountConcurrency ?? 1
  }

  private started = false

  async start(handlers: RunHandlers | undefined, onError: (error: Error) => void): Promise<void> {
    if (this.boss.listenerCount('error') === 0) this.boss.on('error', onError)
    await this.boss.start()
    this.started = true
    await this.boss.createQueue(ABANDONED_RUNS_QUEUE, { name: ABANDONED_RUNS_QUEUE, policy: 'standard', retryLimit: 3, retryDelay: 5 })
    const runOptions = {
      name: RUNS_QUEUE,
      policy: 'standard' as const,
      retryLimit: RUN_RETRIES,
      retryDelay: 0,
      expireInSeconds: this.options.expireSeconds,
      deadLetter: ABANDONED_RUNS_QUEUE,
    }
    await this.boss.createQueue(RUNS_QUEUE, runOptions)
    await this.boss.updateQueue(RUNS_QUEUE, runOptions)
    if (!handlers || this.options.concurrency === 0) return
    const work = { batchSize: 1, pollingIntervalSeconds: this.options.pollingSeconds }
    for (let i = 0; i < this.options.concurrency; i++) {
      const id = await this.boss.work<RunJobData>(RUNS_QUEUE, work, async ([job]) => {
        if (job) await handlers.run(job.data, job.id)
      })
      this.workerIds.push(id)
    }
    await this.boss.work<RunJobData>(ABANDONED_RUNS_QUEUE, work, async ([job]) => {
      if (job) await handlers.abandoned(job.data)
    })
  }

  /** Sends the job of run `pid` through `handle`, so that it commits or rolls back with the run. */
  async send(handle: DbHandle, pid: string, accountId: string): Promise<string> {
    const id = await this.boss.send(RUNS_QUEUE, { pid, accountId } satisfies RunJobData, { db: adapter(handle) })
    if (!id) throw new Error(`pg-boss did not accept the job of run ${pid}`)
    return id
  }

  /**
   * Gives up the current attempt of a run whose worker stopped answering: pg-boss retries it, or
   * moves it to the dead-letter queue. Returns whether it will be retried.
   */
  async failStale(jobId: string, reason: string): Promise<boolean> {
    await this.boss.fail(RUNS_QUEUE, jobId, { message: reason })
    const job = await this.boss.getJobById(RUNS_QUEUE, jobId, { includeArchive: false })
    return job?.state === 'retry' || job?.state === 'created'
  }

  /** Wakes this process's workers, so a run sent here starts without waiting for the next poll. */
  wake(): void {
    for (const id of this.workerIds) this.boss.notifyWorker(id)
  }

  /** Takes no more runs, and waits up to `timeoutMs` for the running ones before giving them up (retried). */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (!this.started) return
    await this.boss.stop({ graceful: true, close: false, wait: true, timeout: timeoutMs })
  }
}

function adapter(handle: DbHandle): PgBoss.Db {
  return {
    executeSql: async (text: string, values: unknown[]) => {
      const result = await handle.executeQuery(CompiledQuery.raw(text, values ?? []))
      return { rows: result.rows }
    },
  }
}
