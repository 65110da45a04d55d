import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/database.js'
import { addSiteError } from '../sites/site-errors.js'
import { admittedRuns, beat, claimProcess, endProcess, lockAccountRuns, setJob, setSiteProcessing, staleRuns, waitingForAccount } from './process-store.js'
import type { ExportLimits } from '../exports/export-channel.js'
import type { CatalogLimits } from '../imports/build-stage.js'
import { performRun } from './run-actions.js'
import { RunFailure, SiteErrorCode } from './run-failure.js'
import { RunQueue, type RunHandlers } from './run-queue.js'

export interface RunWorkerOptions {
  concurrency: number
  pollingSeconds: number
  /** A running run writes a heartbeat this often. */
  heartbeatSeconds: number
  /** A run without a heartbeat for this long lost its process, and is retried or given up. */
  staleSeconds: number
  expireSeconds: number
  now: () => Date
  /** Where exported feed files are kept (DATA_DIR). */
  dataDir: string
  limits: CatalogLimits & ExportLimits
  /** Runs of one account that may run at once, across every process (RUN_ACCOUNT_CONCURRENCY). */
  accountConcurrency: number
}

/**
 * Executes site runs in this process, and looks after runs whose process died: any server process
 * finds a run whose heartbeat stopped and hands it back to pg-boss, which retries it once.
 */
export class RunWorker {
  readonly queue: RunQueue
  private sweeper: NodeJS.Timeout | undefined

  constructor(
    private readonly db: Db,
    private readonly options: RunWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.queue = new RunQueue(db, {
      concurrency: options.concurrency,
      pollingSeconds: options.pollingSeconds,
      expireSeconds: options.expireSeconds,
      accountConcurrency: options.accountConcurrency,
    })
  }

  private stopped = false
  private retry: NodeJS.Timeout | undefined

  /**
   * Starts the queue; when the database cannot be reached yet, the server still comes up (its health
   * check says 503) and the queue keeps trying every few seconds until it can start.
   */
  async startWhenReachable(retrySeconds = 5): Promise<void> {
    try {
      await this.start()
    } catch (error) {
      if (this.stopped) return
      this.log.error({ err: error }, `the run queue could not start; trying again in ${retrySeconds} s`)
      this.retry = setTimeout(() => void this.startWhenReachable(retrySeconds), retrySeconds * 1000)
      this.retry.unref()
    }
  }

  async start(): Promise<void> {
    const handlers: RunHandlers = {
      run: (pid, jobId) => this.execute(pid, jobId),
      abandoned: (pid) => this.abandon(pid),
    }
    await this.queue.start(this.options.concurrency > 0 ? handlers : undefined, (error) => this.log.warn({ err: error }, 'run queue error'))
    if (this.options.concurrency > 0) {
      this.sweeper = setInterval(() => {
        this.sweep().catch((error: unknown) => this.log.warn({ err: error }, 'stale run sweep failed'))
      }, this.options.heartbeatSeconds * 1000)
      this.sweeper.unref()
    }
  }

  private stopping: Promise<void> | undefined
  private interrupted = false

  /**
   * Takes no more runs and waits up to `timeoutMs` for the running ones. A shutdown calls it first,
   * the app's close again: both wait for the same stop.
   */
  stop(timeoutMs?: number): Promise<void> {
    this.stopped = true
    clearTimeout(this.retry)
    clearInterval(this.sweeper)
    this.stopping ??= this.queue.stop(timeoutMs)
    return this.stopping
  }

  /**
   * Shutdown is about to end this process's database sessions: the runs still going fail from now
   * on, and are neither recorded as failed nor logged as errors. They are retried, by pg-boss or by
   * the stale-run sweep of another process (or of this one after a restart), with site error 9001.
   */
  interrupt(): void {
    this.interrupted = true
  }

  private async execute(pid: string, jobId: string): Promise<void> {
    const run = await claimProcess(this.db, pid, jobId)
    if (!run) return
    await setSiteProcessing(this.db, run.site_id, 'Running')
    const heartbeat = setInterval(() => {
      beat(this.db, pid, run.attempt).catch((error: unknown) => this.log.warn({ err: error, pid }, 'run heartbeat failed'))
    }, this.options.heartbeatSeconds * 1000)
    try {
      const message = await performRun(this.db, this.options.dataDir, run, this.options.now, this.options.limits)
      await this.end(pid, run.attempt, 'success', message)
    } catch (error) {
      if (this.interrupted) {
        this.log.warn({ pid }, 'run interrupted by the shutdown; it will be retried')
        throw error
      }
      if (!(error instanceof RunFailure)) {
        // Unexpected: pg-boss retries once, then the dead-letter handler marks the run failed.
        this.log.error({ err: error, pid }, 'run failed unexpectedly')
        throw error
      }
      await addSiteError(this.db, { accountId: run.account_id, siteId: run.site_id, pid, code: error.code, message: error.message, data: error.data })
      await this.end(pid, run.attempt, 'failed', error.message)
    } finally {
      clearInterval(heartbeat)
    }
  }

  /** Ends a run and starts the one waiting behind it, in one transaction. */
  private async end(pid: string, attempt: number | null, status: 'success' | 'failed', message: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const ended = await endProcess(trx, pid, attempt, status, message)
      if (!ended) return false
      await setSiteProcessing(trx, ended.site_id, 'Done')
      // The account's turn passes on: to the run waiting behind this one on the site, or to another
      // site's run of the account that waited for the account's share of the run slots.
      await lockAccountRuns(trx, ended.account_id)
      const free = this.queue.accountConcurrency - (await admittedRuns(trx, ended.account_id))
      for (const waiting of await waitingForAccount(trx, ended.account_id, free)) await setJob(trx, waiting.pid, await this.queue.send(trx, waiting.pid))
      return true
    }).then((ended) => {
      if (ended) this.queue.wake()
      return ended
    })
  }

  private async abandon(pid: string): Promise<void> {
    const run = await this.db.selectFrom('process').selectAll().where('pid', '=', pid).executeTakeFirst()
    if (!run || (run.status !== 'queued' && run.status !== 'running')) return
    const message = 'The run was interrupted or failed unexpectedly twice and was given up; start it again'
    if (await this.end(pid, null, 'failed', message)) {
      await addSiteError(this.db, { accountId: run.account_id, siteId: run.site_id, pid, code: SiteErrorCode.runAbandoned, message, data: { attempts: run.attempt } })
    }
  }

  /** Runs whose worker stopped writing heartbeats: their process died (killed, crashed, lost its host). */
  async sweep(): Promise<void> {
    const stale = await this.db.transaction().execute(async (trx) => {
      const runs = await staleRuns(trx, this.options.staleSeconds)
      // Pushing the heartbeat forward keeps other sweepers off while pg-boss hands the run on.
      for (const run of runs) await trx.updateTable('process').set({ heartbeat_at: this.options.now() }).where('pid', '=', run.pid).execute()
      return runs
    })
    for (const run of stale) {
      if (!run.job_id) continue
      const retried = await this.queue.failStale(run.job_id, 'the process running it stopped answering')
      if (retried) {
        await addSiteError(this.db, {
          accountId: run.account_id,
          siteId: run.site_id,
          pid: run.pid,
          code: SiteErrorCode.runInterrupted,
          message: 'The run was interrupted (the server running it stopped) and is being retried',
          data: { attempt: run.attempt },
        })
        this.queue.wake()
      }
    }
  }
}
