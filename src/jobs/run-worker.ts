import type { SourceFetching } from '../imports/fetched-source.js'
import { performance } from 'node:perf_hooks'
import { SYSTEM_SCOPE, withRequestScope } from '../activity/request-scope.js'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/database.js'
import { settlesWithin } from '../db/connect.js'
import type { FeedStorage } from '../feeds/feed-storage.js'
import type { Run } from '../db/schema.js'
import { addSiteError, runErrorCodes } from '../sites/site-errors.js'
import { accountsOwedATurn } from '../runs/run-admission-store.js'
import { beat, setSiteProcessing, siteExists } from '../runs/run-store.js'
import type { ExportLimits } from '../exports/export-channel.js'
import type { CatalogLimits } from '../imports/build-stage.js'
import { performRun, removeRunFeeds, type RunContext, type RunTrace } from './run-actions.js'
import { ABANDONED, endRun, handBack, passTurn, sweepStaleRuns } from './run-endings.js'
import { RunFailure } from '../sites/run-failure.js'
import { Repeating } from './repeating.js'
import type { RunEnd, RunObserver } from './run-observer.js'
import { RunQueue } from './run-queue.js'

/** How long a shutdown waits for its cut-off runs to be handed back before it stops the database. */
const HAND_BACK_MS = 3000

export interface RunWorkerOptions {
  concurrency: number
  pollingSeconds: number
  /** A running run writes a heartbeat this often. */
  heartbeatSeconds: number
  /** A run without a heartbeat for this long lost its process, and is retried or given up. */
  staleSeconds: number
  /** How long one attempt may take (RUN_TIMEOUT_SECONDS) before the sweep gives it up like a stale one. */
  timeoutSeconds: number
  now: () => Date
  /** Where exported feed files are kept. */
  feedStorage: FeedStorage
  limits: CatalogLimits & ExportLimits
  /** Runs of one account that may run at once, across every process (RUN_ACCOUNT_CONCURRENCY). */
  accountConcurrency: number
  /** Hears how runs start and end (the metrics, the run log). */
  observer?: RunObserver
  /** How imports fetch the sites' feed URL and SFTP sources. */
  fetching?: SourceFetching
}

/**
 * Executes site runs in this process, claimed from the run table (RunQueue), and looks after runs
 * whose process died: any server process that executes runs sweeps for an attempt whose heartbeat
 * stopped and hands it back, to be retried once. The jobs plugin (src/jobs/jobs-plugin.ts) starts
 * and stops it with the app.
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
      timeoutSeconds: options.timeoutSeconds,
      accountConcurrency: options.accountConcurrency,
    })
    this.sweeper = new Repeating(
      options.heartbeatSeconds * 1000,
      () => this.sweep(),
      (error) => this.log.warn({ err: error }, 'stale run sweep failed'),
    )
  }

  /** The attempts this process executes now: what a shutdown hands back when it cannot wait for them. */
  private readonly executing = new Set<Run>()

  /** Starts claiming runs (none at RUN_CONCURRENCY=0) and sweeping for stale ones. A database out of reach is retried at each poll. */
  start(): void {
    if (this.options.concurrency === 0) return
    // A run is the platform's work, whoever asked for it: what it records is the system's, even when
    // a request's wake-up is what started it.
    this.queue.start((run) => withRequestScope(SYSTEM_SCOPE, () => this.execute(run)), this.log)
    this.sweeper.start()
  }

  private stopping: Promise<void> | undefined
  private interrupted = false

  /**
   * Takes no more runs and waits up to `timeoutMs` for the running ones. A shutdown calls it first,
   * the app's close again: both wait for the same stop.
   */
  stop(timeoutMs?: number): Promise<void> {
    this.stopping ??= Promise.all([this.sweeper.stop(), this.queue.stop(timeoutMs)]).then(() => {})
    return this.stopping
  }

  /**
   * Shutdown is about to end this process's database sessions: the runs still going fail from now
   * on without being recorded as failed or logged as errors. Returns them, for handBackInterrupted
   * once their sessions have ended.
   */
  interrupt(): Run[] {
    this.interrupted = true
    return [...this.executing]
  }

  /**
   * Hands back the runs a shutdown cut off (retried with site error 9001, or given up after their
   * last attempt), through `db`, a connection opened after their sessions were ended: another process
   * that claims one then cannot meet its old attempt still writing. One that cannot be handed back
   * within a few seconds is left to the stale-run sweep of another process, or of this one after a restart.
   */
  async handBackInterrupted(db: Db, runs: Run[]): Promise<void> {
    const handing = runs.map((run) => handBack(db, this.queue, run, 'interrupted').catch(() => undefined))
    await settlesWithin(Promise.all(handing), HAND_BACK_MS)
  }

  /** One attempt of a claimed run, until it ended or was handed back; it throws nothing. */
  private async execute(run: Run): Promise<void> {
    const { pid } = run
    this.executing.add(run)
    await setSiteProcessing(this.db, run.site_id, 'Running')
    this.options.observer?.runStarted?.(run)
    const heartbeat = setInterval(() => {
      beat(this.db, pid, run.attempt).catch((error: unknown) => this.log.warn({ err: error, pid }, 'run heartbeat failed'))
    }, this.options.heartbeatSeconds * 1000)
    const trace: RunTrace = { channelIds: [], channels: [] }
    const started = performance.now()
    // Whatever is thrown before an outcome is known is unexpected, and retried.
    const ending: RunEnd = { run, outcome: 'error' }
    try {
      ending.message = await performRun(this.db, run, this.runContext(pid), trace)
      // Not ended here: another attempt owns the run now, or the site was deleted as the run ended.
      const ended = await endRun(this.db, this.queue, run, { attempt: run.attempt, status: 'success', message: ending.message })
      ending.outcome = ended ? 'success' : 'superseded'
      if (!ended && !(await siteExists(this.db, run.site_id).catch(() => true))) await this.siteDeleted(run, trace, ending)
    } catch (error) {
      await this.failed(run, error, trace, ending)
    } finally {
      clearInterval(heartbeat)
      this.executing.delete(run)
      await this.report({ ...ending, seconds: (performance.now() - started) / 1000, products: trace.products, channels: trace.channels })
    }
  }

  /** How an attempt that threw ends, noted in `ending`: an unexpected error hands the run back for its retry. */
  private async failed(run: Run, error: unknown, trace: RunTrace, ending: RunEnd): Promise<void> {
    if (this.interrupted) {
      ending.outcome = 'interrupted'
      ending.message = "Interrupted by this process's shutdown; it will be retried"
      return
    }
    // A delete of the site makes the run's next write to it fail (a foreign key, a serialisation
    // failure): the run stops there, as a delete asks, neither failed nor retried.
    // When the check itself fails, the error is handled as it would be without it.
    if (!(await siteExists(this.db, run.site_id).catch(() => true))) return this.siteDeleted(run, trace, ending)
    if (!(error instanceof RunFailure)) {
      // Unexpected: tried once more, then given up (failed, site error 9002).
      ending.error = error
      if ((await handBack(this.db, this.queue, run, 'error')) === 'abandoned') await this.report({ run, outcome: 'abandoned', message: ABANDONED })
      return
    }
    const { code, message, data } = error
    await addSiteError(this.db, { accountId: run.account_id, siteId: run.site_id, pid: run.pid, code, message, data })
    await endRun(this.db, this.queue, run, { attempt: run.attempt, status: 'failed', message })
    ending.outcome = 'failed'
    ending.message = message
  }

  /**
   * Tells the observer (metrics, run log) how an attempt ended, with the codes of the site errors
   * its run wrote. After a shutdown's interrupt the pool takes nothing more: the codes are left out.
   */
  private async report(end: RunEnd): Promise<void> {
    const { observer } = this.options
    if (!observer) return
    const { account_id, site_id, pid } = end.run
    const errorCodes = end.outcome === 'interrupted' ? undefined : await runErrorCodes(this.db, account_id, site_id, pid).catch(() => undefined)
    observer.runEnded({ ...end, errorCodes })
  }

  /** What a run of this worker works with; a replaced feed file that cannot be removed after its export committed is only logged. */
  private runContext(pid: string): RunContext {
    const { feedStorage: storage, now, limits, observer, fetching } = this.options
    return { storage, now, limits, observer, fetching, onHookError: (error) => this.log.warn({ err: error, pid }, 'removing replaced feed files failed') }
  }

  /**
   * The run's site was deleted while it ran: the run's row went with it (its status answers 404 like
   * the site's), the files it may have exported for the site go too, and its account's turn passes on.
   */
  private async siteDeleted(run: Run, trace: RunTrace, ending: RunEnd): Promise<void> {
    ending.outcome = 'site_deleted'
    ending.message = 'Stopped: its site was deleted while it ran'
    await removeRunFeeds(this.options.feedStorage, trace.channelIds, run.pid).catch((error: unknown) =>
      this.log.warn({ err: error, pid: run.pid }, 'the feed files of a run of a deleted site could not be removed'),
    )
    await this.passTurn(run.account_id)
  }

  /** Gives the account's free run slots to its waiting runs. */
  private passTurn(accountId: string): Promise<void> {
    return passTurn(this.db, this.queue, accountId)
  }

  private async passOwedTurns(): Promise<void> {
    for (const accountId of await accountsOwedATurn(this.db, this.queue.accountConcurrency)) await this.passTurn(accountId)
  }

  /**
   * Attempts whose worker stopped writing heartbeats: their process died (killed, crashed, lost its
   * host), or that ran past RUN_TIMEOUT_SECONDS. And turns of accounts that nobody passed on (see accountsOwedATurn).
   */
  async sweep(): Promise<void> {
    // Apart from the stale runs: a failure of one leaves the other to do its part.
    await this.passOwedTurns().catch((error: unknown) => this.log.warn({ err: error }, 'passing on owed account turns failed'))
    const { staleSeconds, timeoutSeconds, now } = this.options
    for (const run of await sweepStaleRuns(this.db, this.queue, { limits: { staleSeconds, timeoutSeconds }, now: now(), log: this.log })) {
      await this.report({ run, outcome: 'abandoned', message: ABANDONED })
    }
  }
}
