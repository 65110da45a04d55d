import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/database.js'
import type { Run } from '../db/schema.js'
import { inTransaction } from '../db/transaction.js'
import { claimRuns, releaseAttempt } from '../runs/run-store.js'
import { recordEvent } from '../webhooks/outbox.js'
import { runStartedData } from '../webhooks/payloads.js'
import { LeasedClaimWorker, type ClaimSource } from './leased-claim-worker.js'
import { runFields } from './run-log.js'

/** How often a run whose attempt failed unexpectedly (or whose process died) is tried again. */
export const RUN_RETRIES = 1

export interface RunQueueOptions {
  /** Runs this process executes at the same time. 0 makes a process that only queues. */
  concurrency: number
  pollingSeconds: number
  /** How long an attempt may take (RUN_TIMEOUT_SECONDS) before the sweep gives it up: the backstop behind the heartbeat. */
  timeoutSeconds: number
  /** Runs of one account admitted at once (RUN_ACCOUNT_CONCURRENCY); default 1. */
  accountConcurrency?: number
}

/** Executes a claimed run until it ended (success, failure, or handed back for its retry). */
export type RunExecutor = (run: Run) => Promise<void>

/**
 * The site runs waiting in the run table, claimed by the same LeasedClaimWorker that claims feed
 * pushes and webhook deliveries: one mechanism for work that is claimed, leased and retried. A run is
 * claimable once admitted (its site's and its account's turn: run-admission-store.ts) and while no
 * attempt holds it; its lease is its heartbeat, which the run worker's sweep watches. A run keeps its
 * process slot for its whole attempt (it never calls `sending`).
 */
export class RunQueue {
  private worker: LeasedClaimWorker<Run> | undefined
  readonly accountConcurrency: number

  constructor(
    private readonly db: Db,
    private readonly options: RunQueueOptions,
  ) {
    this.accountConcurrency = options.accountConcurrency ?? 1
  }

  /** Starts claiming runs for `execute`, RUN_CONCURRENCY at a time; without it (or at 0) this process only queues. */
  start(execute: RunExecutor | undefined, log: FastifyBaseLogger): void {
    if (!execute || this.options.concurrency === 0 || this.worker) return
    const { concurrency, pollingSeconds, timeoutSeconds } = this.options
    this.worker = new LeasedClaimWorker(runClaims(this.db, execute), { concurrency, maxOpen: concurrency, timeoutSeconds, pollingSeconds }, log)
    this.worker.start()
  }

  /** Looks for admitted runs now, so a run admitted here starts without waiting for the next poll. */
  wake(): void {
    this.worker?.wake()
  }

  /** Claims no more runs, and waits up to `graceMs` for the running ones; then until they have ended. */
  async stop(graceMs = 10_000): Promise<void> {
    await this.worker?.stop(graceMs)
  }
}

/**
 * The run table as a ClaimSource: a claim starts an attempt, and the run's first start announces
 * `run.started` (its started_at is its claim's time then; a claim handed back untried by a process
 * that was stopping leaves started_at as it was, so that the claim after it announces nothing again).
 */
function runClaims(db: Db, execute: RunExecutor): ClaimSource<Run> {
  return {
    name: 'run',
    claim: (limit) =>
      inTransaction(db, async (tx) => {
        const claimed = await claimRuns(tx.db, limit)
        for (const run of claimed) if (isFirstStart(run)) await recordEvent(tx, run.account_id, 'run.started', runStartedData(run))
        return claimed
      }),
    send: (run) => execute(run),
    release: async (run) => {
      await releaseAttempt(db, run.pid, run.attempt, { undo: true })
    },
    logFields: (run) => runFields(run),
  }
}

function isFirstStart(run: Run): boolean {
  return run.attempt === 1 && run.started_at !== null && run.started_at.getTime() === run.claimed_at?.getTime()
}
