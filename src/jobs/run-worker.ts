import { performance } from 'node:perf_hooks'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import type { Process } from '../db/schema.js'
import { addSiteError, type NewSiteError } from '../sites/site-errors.js'
import { admitWaitingRuns } from './account-turns.js'
import {
  accountsOwedATurn,
  beat,
  claimProcess,
  claimStaleRuns,
  endProcess,
  findRunOfJob,
  lockSiteRuns,
  setSiteProcessing,
  siteExists,
} from './process-store.js'
import type { ExportLimits } from '../exports/export-channel.js'
import type { CatalogLimits } from '../imports/build-stage.js'
import { performRun, removeRunFeeds, type RunContext, type RunTrace } from './run-actions.js'
import { RunFailure, SiteErrorCode } from '../sites/run-failure.js'
import { Repeating } from './repeating.js'
import type { RunObserver, RunOutcome } from './run-observer.js'
import { RunQueue, type RunHandlers, type RunJobData } from './run-queue.js'
import { recordEvent } from '../webhooks/outbox.js'
import { runStartedData } from '../webhooks/payloads.js'
import { recordRunEnded } from '../webhooks/run-events.js'

export interface RunWorkerOptions {
  concurrency: number
  pollingSeconds: number
  /** A running run writes a heartbeat this often. */
  heartbeatSeconds: number
  /** A run without a heartbeat for this long lost its process, and is retried or given up. */
  staleSeconds: number
  expireSeconds: number
  now: () => Date
  /** Where exported feed files are kept. */
  feedStorage: FeedStorage
  limits: CatalogLimits & ExportLimits
  /** Runs of one account that may run at once, across every process (RUN_ACCOUNT_CONCURRENCY). */
  accountConcurrency: number
  /** Hears how runs end (the metrics). */
  metrics?: RunObserver
}

/**
 * Executes site runs in this process, and looks after runs whose process died: any server process
 * that executes runs sweeps for a run whose heartbeat stopped and hands it back to pg-boss, which
 * retries it once. The jobs plugin (src/jobs/jobs-plugin.ts) starts and stops it with the app.
 */
export class RunWorker {
  readonly queue: RunQueue
  private readonly sweeper: Repeating

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
    this.sweeper = new Repeating(
      options.heartbeatSeconds * 1000,
      () => this.sweep(),
      (error) => this.log.warn({ err: error }, 'stale run sweep failed'),
    )
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
      run: (job, jobId) => this.execute(job, jobId),
      abandoned: (job) => this.abandon(job),
    }
    await this.queue.start(this.options.concurrency > 0 ? handlers : undefined, (error) => this.log.warn({ err: error }, 'run queue error'))
    if (this.options.concurrency > 0) this.sweeper.start()
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
    this.stopping ??= Promise.all([this.sweeper.stop(), this.queue.stop(timeoutMs)]).then(() => {})
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

  private async execute(job: RunJobData, jobId: string): Promise<void> {
    const { pid } = job
    // Claimed and announced together: `run.started` once, for the first attempt only.
    const run = await inTransaction(this.db, async (tx) => {
      const claimed = await claimProcess(tx.db, pid, jobId)
      if (claimed?.attempt === 1) await recordEvent(tx, claimed.account_id, 'run.started', runStartedData(claimed))
      return claimed
    })
    if (!run) {
      // The run has ended, or went with its site before it started: its job has nothing to do, but a
      // turn of its account that it held passes on.
      if (job.accountId !== undefined) await this.passTurn(job.accountId)
      return
    }
    await setSiteProcessing(this.db, run.site_id, 'Running')
    const heartbeat = setInterval(() => {
      beat(this.db, pid, run.attempt).catch((error: unknown) => this.log.warn({ err: error, pid }, 'run heartbeat failed'))
    }, this.options.heartbeatSeconds * 1000)
    const trace: RunTrace = { channelIds: [] }
    const started = performance.now()
    // Whatever is thrown before an outcome is known is unexpected, and retried.
    let outcome: RunOutcome = 'error'
    try {
      const message = await performRun(this.db, run, this.runContext(pid), trace)
      // Not ended here: another attempt owns the run now, or the site was deleted as the run ended.
      outcome = (await this.end(run, run.attempt, 'success', message)) ? 'success' : 'superseded'
      if (outcome === 'superseded' && !(await siteExists(this.db, run.site_id).catch(() => true))) {
        outcome = 'site_deleted'
        await this.siteDeleted(run, trace)
      }
    } catch (error) {
      if (this.interrupted) {
        outcome = 'interrupted'
        this.log.warn({ pid }, 'run interrupted by the shutdown; it will be retried')
        throw error
      }
      // A delete of the site makes the run's next write to it fail (a foreign key, a serialisation
      // failure): the run stops there, as a delete asks, neither failed nor retried.
      // When the check itself fails, the error is handled as it would be without it.
      if (!(await siteExists(this.db, run.site_id).catch(() => true))) {
        outcome = 'site_deleted'
        return this.siteDeleted(run, trace)
      }
      if (!(error instanceof RunFailure)) {
        // Unexpected: pg-boss retries once, then the dead-letter handler marks the run failed.
        this.log.error({ err: error, pid }, 'run failed unexpectedly')
        throw error
      }
      await addSiteError(this.db, { accountId: run.account_id, siteId: run.site_id, pid, code: error.code, message: error.message, data: error.data })
      await this.end(run, run.attempt, 'failed', error.message)
      outcome = 'failed'
    } finally {
      clearInterval(heartbeat)
      this.options.metrics?.runEnded(run.action, outcome, (performance.now() - started) / 1000)
    }
  }

  /** What a run of this worker works with; a replaced feed file that cannot be removed after its export committed is only logged. */
  private runContext(pid: string): RunContext {
    const { feedStorage: storage, now, limits, metrics } = this.options
    return { storage, now, limits, metrics, onHookError: (error) => this.log.warn({ err: error, pid }, 'removing replaced feed files failed') }
  }

  /**
   * The run's site was deleted while it ran: the run's row went with it (its status answers 404 like
   * the site's), the files it may have exported for the site go too, and its account's turn passes on.
   */
  private async siteDeleted(run: Process, trace: RunTrace): Promise<void> {
    this.log.info({ pid: run.pid, siteId: run.site_id }, 'run stopped: its site was deleted')
    await removeRunFeeds(this.options.feedStorage, trace.channelIds, run.pid).catch((error: unknown) =>
      this.log.warn({ err: error, pid: run.pid }, 'the feed files of a run of a deleted site could not be removed'),
    )
    await this.passTurn(run.account_id)
  }

  /**
   * Ends a run and passes its account's turn on (to the run waiting behind it on the site, or to a
   * run of another site of the account that waited for a free slot), in one transaction. Returns
   * whether the run was ended here; the turn passes on either way.
   */
  private async end(
    run: Pick<Process, 'pid' | 'site_id' | 'account_id'>,
    attempt: number | null,
    status: 'success' | 'failed',
    message: string,
    siteError?: Pick<NewSiteError, 'code' | 'data'>,
  ): Promise<boolean> {
    const { ended, admitted } = await inTransaction(this.db, async (tx) => {
      await lockSiteRuns(tx.db, run.site_id)
      const ended = await endProcess(tx.db, run.pid, attempt, status, message)
      if (ended) {
        await setSiteProcessing(tx.db, ended.site_id, 'Done')
        // Before the event, which carries the codes of the run's site errors.
        if (siteError) await addSiteError(tx.db, { accountId: run.account_id, siteId: run.site_id, pid: run.pid, message, ...siteError })
        await recordRunEnded(tx, ended)
      }
      return { ended: ended !== undefined, admitted: await admitWaitingRuns(tx.db, this.queue, run.account_id) }
    })
    if (ended || admitted > 0) this.queue.wake()
    return ended
  }

  /** Gives the account's free run slots to its waiting runs. */
  private async passTurn(accountId: string): Promise<void> {
    const admitted = await inTransaction(this.db, (tx) => admitWaitingRuns(tx.db, this.queue, accountId))
    if (admitted > 0) this.queue.wake()
  }

  private async passOwedTurns(): Promise<void> {
    for (const accountId of await accountsOwedATurn(this.db, this.queue.accountConcurrency)) await this.passTurn(accountId)
  }

  private async abandon(job: RunJobData): Promise<void> {
    const run = await findRunOfJob(this.db, job.pid)
    if (!run || (run.status !== 'queued' && run.status !== 'running')) {
      if (job.accountId !== undefined) await this.passTurn(job.accountId)
      return
    }
    const message = 'The run was interrupted or failed unexpectedly twice and was given up; start it again'
    if (await this.end(run, null, 'failed', message, { code: SiteErrorCode.runAbandoned, data: { attempts: run.attempt } })) {
      this.options.metrics?.runEnded(run.action, 'abandoned')
    }
  }

  /**
   * Runs whose worker stopped writing heartbeats: their process died (killed, crashed, lost its
   * host). And turns of accounts that nobody passed on (see accountsOwedATurn).
   */
  async sweep(): Promise<void> {
    // Apart from the stale runs: a failure of one leaves the other to do its part.
    await this.passOwedTurns().catch((error: unknown) => this.log.warn({ err: error }, 'passing on owed account turns failed'))
    const stale = await claimStaleRuns(this.db, this.options.staleSeconds, this.options.now())
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
