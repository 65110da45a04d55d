import { sql, type RawBuilder } from 'kysely'
import { lockForTransaction, type LockedTransaction } from './advisory-locks.js'
import type { Db } from './database.js'
import { inTransaction } from './transaction.js'

// Rows that worker processes claim under a lease (channel_push, webhook_delivery; each has account_id,
// id, status, attempts and locked_until): a claim counts an attempt and sets locked_until; a process
// that dies mid-attempt leaves the row to be claimed again once the lease ends. The claim statements
// differ with their tables' columns; what they share is here.

/** What every claim is bounded by; each table's claim adds its own limits. */
export interface ClaimLimits {
  /** How long a claim holds before another process may take the row again. */
  leaseSeconds: number
  /** Attempts of one account in flight at once, across every process. */
  accountConcurrency: number
}

/** A claimed row, as far as the fence needs it: the attempt it claimed. */
export interface HeldClaim {
  account_id: string
  id: string
  attempts: number
}

/** `now()` plus `seconds`, for a lease's end or a retry's time. */
export function secondsFromNow(seconds: number): RawBuilder<Date> {
  return sql<Date>`now() + make_interval(secs => ${seconds})`
}

/**
 * Runs a claim statement under `lockName`'s transaction lock. Claims of one table are serialised by
 * it: the per-account cap counts the attempts in flight, and two claims at the same moment in two
 * processes would each count without the other's.
 */
export async function claimUnderLock<T>(db: Db, lockName: string, claim: (trx: LockedTransaction) => Promise<T>): Promise<T> {
  return inTransaction(db, async ({ db: trx }) => {
    await lockForTransaction(trx, lockName)
    return claim(trx)
  })
}

/**
 * The fence of an update of a claimed row: only the claim holding it may change it, so the row must
 * be at the same attempt, still in the status a claim holds it in (`heldStatus`), under a lease. A
 * process given up for dead whose attempt still ends changes nothing: the row was claimed again (one
 * more attempt) or ended since. For an UPDATE of one of those tables, unaliased.
 */
export function heldByClaim(claim: HeldClaim, heldStatus: 'running' | 'pending'): RawBuilder<boolean> {
  return sql<boolean>`account_id = ${claim.account_id} AND id = ${claim.id} AND status = ${heldStatus}
    AND attempts = ${claim.attempts} AND locked_until IS NOT NULL`
}
