import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/database.js'
import type { Run } from '../db/schema.js'
import { retryingConflicts } from '../db/errors.js'
import { inTransaction } from '../db/transaction.js'
import { SiteErrorCode } from '../sites/run-failure.js'
import { addSiteError, type NewSiteError } from '../sites/site-errors.js'
import { recordRunEnded } from '../webhooks/run-events.js'
import { admitWaitingRuns, lockSiteRuns } from '../runs/run-admission-store.js'
import { claimStaleRuns, releaseAttempt, setRunEnded, setSiteProcessing, type StaleLimits } from '../runs/run-store.js'
import { runFields } from './run-log.js'
import { RUN_RETRIES, type RunQueue } from './run-queue.js'

// How the run worker ends runs and hands their account's turn on: apart from the worker, which
// decides when; each function here wakes the queue when it admitted a run.

/**
 * Ends a run and passes its account's turn on (to the run waiting behind it on the site, or to a
 * run of another site of the account that waited for a free slot), in one transaction. Returns
 * whether the run was ended here; the turn passes on either way.
 */
export async function endRun(
  db: Db,
  queue: RunQueue,
  run: Pick<Run, 'pid' | 'site_id' | 'account_id'>,
  ending: { attempt: number; status: 'success' | 'failed'; message: string; siteError?: Pick<NewSiteError, 'code' | 'data'> },
): Promise<boolean> {
  const { attempt, status, message, siteError } = ending
  // Ended again when Postgres ended the transaction for a conflict: a run that did its work is not retried for it.
  const { ended, admitted } = await retryingConflicts(() =>
    inTransaction(db, async (tx) => {
      await lockSiteRuns(tx.db, run.site_id)
      const ended = await setRunEnded(tx.db, run.pid, attempt, status, message)
      if (ended) {
        await setSiteProcessing(tx.db, ended.site_id, 'Done')
        // Before the event, which carries the codes of the run's site errors.
        if (siteError) await addSiteError(tx.db, { accountId: run.account_id, siteId: run.site_id, pid: run.pid, message, ...siteError })
        await recordRunEnded(tx, ended)
      }
      return { ended: ended !== undefined, admitted: await admitWaitingRuns(tx.db, queue, run.account_id) }
    }),
  )
  if (ended || admitted > 0) queue.wake()
  return ended
}

/** Gives the account's free run slots to its waiting runs. */
export async function passTurn(db: Db, queue: RunQueue, accountId: string): Promise<void> {
  const admitted = await inTransaction(db, (tx) => admitWaitingRuns(tx.db, queue, accountId))
  if (admitted > 0) queue.wake()
}

/** Site error 9001's message, by why the attempt was handed back. */
const RETRIED: Record<Exclude<HandBackReason, 'error'>, string> = {
  interrupted: 'The run was interrupted (the server running it stopped) and is being retried',
  timed_out: 'The run took longer than RUN_TIMEOUT_SECONDS and is being retried',
}
/** The message of a run given up after its last attempt (site error 9002). */
export const ABANDONED = 'The run was interrupted or failed unexpectedly twice and was given up; start it again'

/**
 * Why an attempt is handed back: its process died or stopped, or it ran past RUN_TIMEOUT_SECONDS
 * (both site error 9001 on the run), or it failed unexpectedly.
 */
export type HandBackReason = 'interrupted' | 'timed_out' | 'error'

/**
 * Ends the attempt without ending the run: it is claimed again when it has an attempt left
 * (RUN_RETRIES), with site error 9001 when it was interrupted; otherwise it is given up, failed with
 * site error 9002. Returns what happened, or undefined when the attempt no longer held the run.
 */
export async function handBack(db: Db, queue: RunQueue, run: Run, reason: HandBackReason): Promise<'retried' | 'abandoned' | undefined> {
  if (run.attempt > RUN_RETRIES) {
    const siteError = { code: SiteErrorCode.runAbandoned, data: { attempts: run.attempt } }
    return (await endRun(db, queue, run, { attempt: run.attempt, status: 'failed', message: ABANDONED, siteError })) ? 'abandoned' : undefined
  }
  const released = await inTransaction(db, async (tx) => {
    const released = await releaseAttempt(tx.db, run.pid, run.attempt)
    if (released && reason !== 'error') {
      const { account_id: accountId, site_id: siteId, pid, attempt } = run
      await addSiteError(tx.db, { accountId, siteId, pid, code: SiteErrorCode.runInterrupted, message: RETRIED[reason], data: { attempt } })
    }
    return released
  })
  if (!released) return undefined
  queue.wake()
  return 'retried'
}

/**
 * Attempts whose worker stopped writing heartbeats (their process died: killed, crashed, lost its
 * host) or that ran past RUN_TIMEOUT_SECONDS: each is handed back (handBack), and its end is logged
 * here, since its own process could not. Returns the runs given up.
 */
export async function sweepStaleRuns(db: Db, queue: RunQueue, sweep: { limits: StaleLimits; now: Date; log: FastifyBaseLogger }): Promise<Run[]> {
  const { limits, now, log } = sweep
  const abandoned: Run[] = []
  for (const run of await claimStaleRuns(db, limits, now)) {
    const timedOut = run.claimed_at !== null && now.getTime() - run.claimed_at.getTime() >= limits.timeoutSeconds * 1000
    const reason = timedOut ? 'timed_out' : 'interrupted'
    const outcome = await handBack(db, queue, run, reason)
    if (outcome === 'abandoned') abandoned.push(run)
    // The end line of an attempt whose process could not write one; not counted (the metrics count the
    // attempts that ended in their own process).
    if (outcome === 'retried') {
      log.warn({ ...runFields(run), result: 'interrupted', errorCodes: [SiteErrorCode.runInterrupted], message: RETRIED[reason] }, 'run ended')
    }
  }
  return abandoned
}
