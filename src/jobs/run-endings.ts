import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/database.js'
import type { Run } from '../db/schema.js'
import { inTransaction } from '../db/transaction.js'
import { SiteErrorCode } from '../sites/run-failure.js'
import { addSiteError, type NewSiteError } from '../sites/site-errors.js'
import { recordRunEnded } from '../webhooks/run-events.js'
import { admitWaitingRuns } from './account-turns.js'
import { lockSiteRuns } from '../runs/run-admission-store.js'
import { claimStaleRuns, setRunEnded, setSiteProcessing } from '../runs/run-store.js'
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
  ending: { attempt: number | null; status: 'success' | 'failed'; message: string; siteError?: Pick<NewSiteError, 'code' | 'data'> },
): Promise<boolean> {
  const { attempt, status, message, siteError } = ending
  const { ended, admitted } = await inTransaction(db, async (tx) => {
    await lockSiteRuns(tx.db, run.site_id)
    const ended = await setRunEnded(tx.db, run.pid, attempt, status, message)
    if (ended) {
      await setSiteProcessing(tx.db, ended.site_id, 'Done')
      // Before the event, which carries the codes of the run's site errors.
      if (siteError) await addSiteError(tx.db, { accountId: run.account_id, siteId: run.site_id, pid: run.pid, message, ...siteError })
      await recordRunEnded(tx, ended)
    }
    return { ended: ended !== undefined, admitted: await admitWaitingRuns(tx.db, queue, run.account_id) }
  })
  if (ended || admitted > 0) queue.wake()
  return ended
}

/** Gives the account's free run slots to its waiting runs. */
export async function passTurn(db: Db, queue: RunQueue, accountId: string): Promise<void> {
  const admitted = await inTransaction(db, (tx) => admitWaitingRuns(tx.db, queue, accountId))
  if (admitted > 0) queue.wake()
}

/**
 * Runs whose worker stopped writing heartbeats: their process died (killed, crashed, lost its
 * host). Each goes back to pg-boss, which retries it once, with site error 9001.
 */
export async function retryStaleRuns(db: Db, queue: RunQueue, staleSeconds: number, now: Date, log: FastifyBaseLogger): Promise<void> {
  for (const run of await claimStaleRuns(db, staleSeconds, now)) {
    if (!run.job_id) continue
    const message = 'The run was interrupted (the server running it stopped) and is being retried'
    const code = SiteErrorCode.runInterrupted
    // Written before the job goes back: another process may take the retry and end it at once, and
    // whoever reads the run's errors then must find this one. A last attempt is given up instead (9002).
    const retried = run.attempt <= RUN_RETRIES
    const error = { accountId: run.account_id, siteId: run.site_id, pid: run.pid, code, message, data: { attempt: run.attempt } }
    if (retried) await addSiteError(db, error)
    if (!(await queue.failStale(run.job_id, 'the process running it stopped answering')) || !retried) continue
    // The end line of an attempt whose process died before it could write one: logged here, and not
    // counted (the metrics count the attempts that ended in their own process).
    log.warn({ ...runFields(run), result: 'interrupted', errorCodes: [code], message }, 'run ended')
    queue.wake()
  }
}
