import { sql, type RawBuilder } from 'kysely'
import { lockForTransaction, type LockedTransaction } from './advisory-locks.js'
import type { Db } from './database.js'
import { inTransaction } from './transaction.js'

// Rows that worker processes claim under a lease, in one shape (channel_push, webhook_delivery; each
// has account_id, id, status, attempts, next_attempt_at and locked_until): a row is `pending` until it
// ended, and due once next_attempt_at has come; a claim counts an attempt and sets locked_until, and
// the row stays `pending`; a process that dies mid-attempt leaves the row to be claimed again once the
// lease ends. The fair choice of due rows, the lock that serialises claims and the fence are here;
// each table's claim statement adds what it sets and returns. Runs are claimed from their own table
// (src/runs/run-store.ts) by the same worker: their lease is their heartbeat.

/** The tables whose rows are claimed in this shape. */
export type LeasedTable = 'channel_push' | 'webhook_delivery'

/** What every claim is bounded by; each table's claim adds its own limits. */
export interface ClaimLimits {
  /** Rows wanted now: the free slots of the claiming process (…_CONCURRENCY). */
  limit: number
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
 * The ids of up to `limit` due rows of `table`, locked (SKIP LOCKED: rows another claim holds are
 * passed over, not waited for), shared fairly between accounts: each account gets at most
 * `accountConcurrency` in flight across every process, and the accounts with fewer in flight come
 * first, so one with nothing in flight is served before another gets its second, whatever their
 * age; then the oldest due. `eligible` narrows the due rows (of alias `x`). For `WHERE id IN (…)`.
 */
export function fairlyDueIds(table: LeasedTable, options: { limit: number; accountConcurrency: number; eligible?: RawBuilder<boolean> }): RawBuilder<unknown> {
  const { limit, accountConcurrency, eligible = sql<boolean>`true` } = options
  const rows = sql.table(table)
  return sql`
    SELECT pick.id FROM (
      SELECT DISTINCT q.account_id FROM ${rows} q WHERE q.status = 'pending' AND q.next_attempt_at <= now()
    ) a
    CROSS JOIN LATERAL (
      SELECT count(*) AS busy FROM ${rows} b
      WHERE b.account_id = a.account_id AND b.status = 'pending' AND b.locked_until >= now()
    ) flight
    CROSS JOIN LATERAL (
      SELECT r.id, r.next_attempt_at, row_number() OVER (ORDER BY r.next_attempt_at, r.id) AS turn
      FROM (
        SELECT x.id, x.next_attempt_at FROM ${rows} x
        WHERE x.account_id = a.account_id AND x.status = 'pending' AND x.next_attempt_at <= now()
          AND (x.locked_until IS NULL OR x.locked_until < now())
          AND ${eligible}
        ORDER BY x.next_attempt_at, x.id
        LIMIT ${accountConcurrency}
        FOR UPDATE SKIP LOCKED
      ) r
    ) pick
    WHERE pick.turn <= ${accountConcurrency} - flight.busy
    ORDER BY flight.busy + pick.turn, pick.next_attempt_at, pick.id
    LIMIT ${limit}`
}

/**
 * The fence of an update of a claimed row: only the claim holding it may change it, so the row must
 * be at the same attempt, still pending, under a lease. A process given up for dead whose attempt
 * still ends changes nothing: the row was claimed again (one more attempt) or ended since. For an
 * UPDATE of one of those tables, unaliased.
 */
export function heldByClaim(claim: HeldClaim): RawBuilder<boolean> {
  return sql<boolean>`account_id = ${claim.account_id} AND id = ${claim.id} AND status = 'pending'
    AND attempts = ${claim.attempts} AND locked_until IS NOT NULL`
}
