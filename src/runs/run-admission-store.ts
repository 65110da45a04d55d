import { sql } from 'kysely'
import { lockKeysForTransaction, type LockedTransaction } from '../db/advisory-locks.js'
import type { DbHandle } from '../db/database.js'
import type { Run } from '../db/schema.js'
import { admitRun } from './run-store.js'

// Which runs may start: one queued and one running per site, RUN_ACCOUNT_CONCURRENCY admitted per
// account, and the locks under which those decisions are taken. A run's own row is run-store.ts.

/** The site's queued and running runs, locked: the caller decides under the lock whether one more may queue. */
export async function activeRuns(db: DbHandle, siteId: string): Promise<Run[]> {
  return db.selectFrom('run').selectAll().where('site_id', '=', siteId).where('status', 'in', ['queued', 'running']).forUpdate().execute()
}

/**
 * Serialises the decisions about one account's runs (which may start) for the rest of the
 * transaction. An advisory lock rather than the account row: nothing else waits on it.
 */
export async function lockAccountRuns(trx: LockedTransaction, accountId: string): Promise<void> {
  await lockKeysForTransaction(trx, ACCOUNT_RUNS_LOCK, [accountId])
}

// The first key of the account-runs advisory lock: a number of our own, so it meets no other lock.
const ACCOUNT_RUNS_LOCK = 7301

/** Runs of the account that may run now: running, or queued and admitted. */
export async function admittedRuns(db: DbHandle, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('run')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('status', 'in', ['queued', 'running'])
    .where('admitted_at', 'is not', null)
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

/**
 * The account's runs that wait unadmitted although their site runs nothing: they wait for the
 * account's turn (RUN_ACCOUNT_CONCURRENCY). Oldest first, locked, at most `limit`. A run whose row
 * another transaction holds is passed over, not waited for: a delete of its site holds it while it
 * waits for the account's lock, which the caller holds (the sweep's accountsOwedATurn admits one
 * passed over for another reason).
 */
export async function waitingForAccount(db: DbHandle, accountId: string, limit: number): Promise<Run[]> {
  if (limit <= 0) return []
  return db
    .selectFrom('run as p')
    .selectAll('p')
    .where('p.account_id', '=', accountId)
    .where('p.status', '=', 'queued')
    .where('p.admitted_at', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('run as r').select('r.pid').whereRef('r.site_id', '=', 'p.site_id').where('r.status', '=', 'running'))),
    )
    .orderBy('p.created_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
}

/**
 * Takes the site's row for a decision about its runs, before any of its runs' rows: a delete of the
 * site takes the site row and then, by cascade, its runs' rows, so that taking them the other way
 * round could deadlock with it. The mode lets foreign key checks (KEY SHARE) of the site's running
 * work through. False when the site is gone.
 */
export async function lockSiteRuns(db: DbHandle, siteId: string): Promise<boolean> {
  return (await db.selectFrom('site').select('id').where('id', '=', siteId).forNoKeyUpdate().executeTakeFirst()) !== undefined
}

/**
 * lockSiteRuns for several sites and then lockAccountRuns for their accounts, for one transaction
 * that queues runs of several sites (a scheduler batch). Each lock is held to the commit, so they are
 * all taken first, sites before accounts as a single request takes them, accounts in one order for
 * every process: a batch that took one account's lock and then waited for a site row, or for
 * another account, could wait for a request (or another process's batch) that waits for it.
 */
export async function lockRunsOfSites(trx: LockedTransaction, sites: { id: string; account_id: string }[]): Promise<void> {
  if (sites.length === 0) return
  await trx
    .selectFrom('site')
    .select('id')
    .where(
      'id',
      'in',
      sites.map((site) => site.id),
    )
    .orderBy('id')
    .forNoKeyUpdate()
    .execute()
  const accounts = [...new Set(sites.map((site) => site.account_id))]
  await lockKeysForTransaction(trx, ACCOUNT_RUNS_LOCK, accounts)
}

/**
 * Accounts with runs waiting for the account's turn (RUN_ACCOUNT_CONCURRENCY) while fewer than
 * `concurrency` of their runs are admitted: a turn that nobody passed on (the admitted run went with
 * its site before it was claimed). At most 50.
 */
export async function accountsOwedATurn(db: DbHandle, concurrency: number): Promise<string[]> {
  const { rows } = await sql<{ account_id: string }>`
    SELECT DISTINCT w.account_id FROM run w
    WHERE w.status = 'queued' AND w.admitted_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM run r WHERE r.site_id = w.site_id AND r.status = 'running')
      AND (SELECT count(*) FROM run a
           WHERE a.account_id = w.account_id AND a.status IN ('queued', 'running') AND a.admitted_at IS NOT NULL) < ${concurrency}
    LIMIT 50`.execute(db)
  return rows.map((row) => row.account_id)
}

/** What admitting runs needs of the run queue: each account's share of run slots, and a wake-up once an admission committed. */
export interface RunTurns {
  readonly accountConcurrency: number
  wake(): void
}

/**
 * Passes the account's free run slots (RUN_ACCOUNT_CONCURRENCY) on to its runs that wait for one,
 * oldest first, in the caller's transaction. Safe to call whenever a slot may have come free, since
 * it admits only as many as are free. Returns how many it admitted: the caller wakes the queue once
 * its transaction committed.
 */
export async function admitWaitingRuns(trx: LockedTransaction, turns: Pick<RunTurns, 'accountConcurrency'>, accountId: string): Promise<number> {
  await lockAccountRuns(trx, accountId)
  const free = turns.accountConcurrency - (await admittedRuns(trx, accountId))
  const waiting = await waitingForAccount(trx, accountId, free)
  for (const run of waiting) await admitRun(trx, run.pid)
  return waiting.length
}
