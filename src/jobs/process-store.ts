import { lockKeysForTransaction, type LockedTransaction } from '../db/advisory-locks.js'
import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Process, ProcessAction } from '../db/schema.js'
import { isUuid } from '../db/ids.js'

export async function findProcess(db: DbHandle, accountId: string, siteId: string, pid: string): Promise<Process | undefined> {
  if (!isUuid(pid)) return undefined
  return db.selectFrom('process').selectAll().where('account_id', '=', accountId).where('site_id', '=', siteId).where('pid', '=', pid).executeTakeFirst()
}

/** The site's queued and running runs, locked: the caller decides under the lock whether one more may queue. */
export async function activeRuns(db: DbHandle, siteId: string): Promise<Process[]> {
  return db.selectFrom('process').selectAll().where('site_id', '=', siteId).where('status', 'in', ['queued', 'running']).forUpdate().execute()
}

export async function insertProcess(
  db: DbHandle,
  run: { pid: string; accountId: string; siteId: string; action: ProcessAction; targetId: string | null; trigger: 'api' | 'schedule' },
): Promise<void> {
  await db
    .insertInto('process')
    .values({
      pid: run.pid,
      account_id: run.accountId,
      site_id: run.siteId,
      action: run.action,
      target_id: run.targetId,
      trigger: run.trigger,
      status: 'queued',
      job_id: null,
      heartbeat_at: null,
      started_at: null,
      finished_at: null,
    })
    .execute()
}

export async function setJob(db: DbHandle, pid: string, jobId: string): Promise<void> {
  await db.updateTable('process').set({ job_id: jobId }).where('pid', '=', pid).execute()
}

/** Seconds the recent successful runs of this action on the site took, averaged; 0 without history. */
export async function estimatedSeconds(db: DbHandle, siteId: string, action: ProcessAction): Promise<number> {
  const recent = db
    .selectFrom('process')
    .select(sql<number>`extract(epoch from finished_at - started_at)`.as('seconds'))
    .where('site_id', '=', siteId)
    .where('action', '=', action)
    .where('status', '=', 'success')
    .orderBy('finished_at', 'desc')
    .limit(5)
    .as('recent')
  const row = await db
    .selectFrom(recent)
    .select(sql<string | null>`avg(seconds)`.as('avg'))
    .executeTakeFirst()
  return Math.round(Number(row?.avg ?? 0) * 10) / 10
}

/** Starts an attempt of the run: one worker wins (the row lock), and a retry after a crash counts up. */
export async function claimProcess(db: DbHandle, pid: string, jobId: string): Promise<Process | undefined> {
  return db
    .updateTable('process')
    .set({
      status: 'running',
      attempt: sql`attempt + 1`,
      job_id: jobId,
      heartbeat_at: sql`now()`,
      started_at: sql`coalesce(started_at, now())`,
    })
    .where('pid', '=', pid)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst()
}

export async function beat(db: DbHandle, pid: string, attempt: number): Promise<void> {
  await db
    .updateTable('process')
    .set({ heartbeat_at: sql`now()` })
    .where('pid', '=', pid)
    .where('attempt', '=', attempt)
    .where('status', '=', 'running')
    .execute()
}

/**
 * Ends the run. `attempt` fences a worker that was given up for dead but still finishes: only the
 * attempt that owns the run may end it. Returns the ended run, or nothing when it was not ours.
 */
export async function endProcess(
  db: DbHandle,
  pid: string,
  attempt: number | null,
  status: 'success' | 'failed',
  message: string,
): Promise<Process | undefined> {
  let query = db
    .updateTable('process')
    .set({ status, message, finished_at: sql`now()`, started_at: sql`coalesce(started_at, now())` })
    .where('pid', '=', pid)
    .where('status', 'in', ['queued', 'running'])
  if (attempt !== null) query = query.where('attempt', '=', attempt)
  return query.returningAll().executeTakeFirst()
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

/** Runs of the account that may run now: running, or queued with a job. */
export async function admittedRuns(db: DbHandle, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('process')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('status', 'in', ['queued', 'running'])
    .where('job_id', 'is not', null)
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

/**
 * The account's runs that wait without a job although their site runs nothing: they wait for the
 * account's turn (RUN_ACCOUNT_CONCURRENCY). Oldest first, locked, at most `limit`.
 */
export async function waitingForAccount(db: DbHandle, accountId: string, limit: number): Promise<Process[]> {
  if (limit <= 0) return []
  return db
    .selectFrom('process as p')
    .selectAll('p')
    .where('p.account_id', '=', accountId)
    .where('p.status', '=', 'queued')
    .where('p.job_id', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('process as r').select('r.pid').whereRef('r.site_id', '=', 'p.site_id').where('r.status', '=', 'running'))),
    )
    .orderBy('p.created_at')
    .limit(limit)
    .forUpdate()
    .execute()
}

/**
 * Claims the running runs whose worker has not written a heartbeat for `staleSeconds` (their process
 * died), at most 50, in one statement: their heartbeat moves to `now`, which keeps other sweepers off
 * them while pg-boss hands them on, and rows another sweeper holds are skipped, not waited for.
 */
export async function claimStaleRuns(db: DbHandle, staleSeconds: number, now: Date): Promise<Process[]> {
  const { rows } = await sql<Process>`
    UPDATE process SET heartbeat_at = ${now}
    WHERE pid IN (
      SELECT pid FROM process
      WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => ${staleSeconds})
      LIMIT 50
      FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db)
  return rows
}

/** The run `pid`, whatever its account: for the job that carries it, which has no account to check against. */
export async function findRunOfJob(db: DbHandle, pid: string): Promise<Process | undefined> {
  return db.selectFrom('process').selectAll().where('pid', '=', pid).executeTakeFirst()
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
 * Whether the site still exists once a delete of it that is under way has ended: KEY SHARE waits for
 * a delete's row lock, so a run that failed because of the delete does not see the site before the
 * delete commits.
 */
export async function siteExists(db: DbHandle, siteId: string): Promise<boolean> {
  return (await db.selectFrom('site').select('id').where('id', '=', siteId).forKeyShare().executeTakeFirst()) !== undefined
}

/**
 * Accounts with runs waiting for the account's turn (RUN_ACCOUNT_CONCURRENCY) while fewer than
 * `concurrency` of their runs are admitted: a turn that nobody passed on (the admitted run went with
 * its site before its job ran, or the job was sent before jobs named their account). At most 50.
 */
export async function accountsOwedATurn(db: DbHandle, concurrency: number): Promise<string[]> {
  const { rows } = await sql<{ account_id: string }>`
    SELECT DISTINCT w.account_id FROM process w
    WHERE w.status = 'queued' AND w.job_id IS NULL
      AND NOT EXISTS (SELECT 1 FROM process r WHERE r.site_id = w.site_id AND r.status = 'running')
      AND (SELECT count(*) FROM process a
           WHERE a.account_id = w.account_id AND a.status IN ('queued', 'running') AND a.job_id IS NOT NULL) < ${concurrency}
    LIMIT 50`.execute(db)
  return rows.map((row) => row.account_id)
}

export async function setSiteProcessing(db: DbHandle, siteId: string, status: 'Running' | 'Done'): Promise<void> {
  await db.updateTable('site').set({ processing_status: status }).where('id', '=', siteId).execute()
}

/** The newest batch sequence number: an import applies the batches uploaded before it started. */
export async function latestBatchSeq(db: DbHandle): Promise<string> {
  const row = await db
    .selectFrom('batch')
    .select(sql<string>`coalesce(max(seq), 0)::text`.as('seq'))
    .executeTakeFirst()
  return row?.seq ?? '0'
}
