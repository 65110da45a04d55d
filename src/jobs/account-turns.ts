import type { LockedTransaction } from '../db/advisory-locks.js'
import { admittedRuns, lockAccountRuns, waitingForAccount } from '../runs/run-admission-store.js'
import { setJob } from '../runs/run-store.js'
import type { RunQueue } from './run-queue.js'

/**
 * Passes the account's free run slots (RUN_ACCOUNT_CONCURRENCY) on to its runs that wait for one,
 * oldest first, in the caller's transaction: each gets its job. Safe to call whenever a slot may
 * have come free, since it admits only as many as are free. Returns how many it admitted.
 */
export async function admitWaitingRuns(trx: LockedTransaction, queue: RunQueue, accountId: string): Promise<number> {
  await lockAccountRuns(trx, accountId)
  const free = queue.accountConcurrency - (await admittedRuns(trx, accountId))
  const waiting = await waitingForAccount(trx, accountId, free)
  for (const run of waiting) await setJob(trx, run.pid, await queue.send(trx, run.pid, accountId))
  return waiting.length
}
