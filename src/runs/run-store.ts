import { sql, type ExpressionBuilder } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Database, Run, RunAction, Site } from '../db/schema.js'
import { isUuid } from '../db/ids.js'

// A run's row from its request to its end, and the counts the metrics read. Which runs may start
// (the site's and the account's turns, and their locks) is run-admission-store.ts.

export async function findRun(db: DbHandle, accountId: string, siteId: string, pid: string): Promise<Run | undefined> {
  if (!isUuid(pid)) return undefined
  return db.selectFrom('run').selectAll().where('account_id', '=', accountId).where('site_id', '=', siteId).where('pid', '=', pid).executeTakeFirst()
}

export async function insertRun(
  db: DbHandle,
  run: { pid: string; accountId: string; siteId: string; action: RunAction; targetId: string | null; trigger: 'api' | 'schedule' },
): Promise<void> {
  await db
    .insertInto('run')
    .values({
      pid: run.pid,
      account_id: run.accountId,
      site_id: run.siteId,
      action: run.action,
      target_id: run.targetId,
      trigger: run.trigger,
      status: 'queued',
      admitted_at: null,
      claimed_at: null,
      heartbeat_at: null,
      started_at: null,
      finished_at: null,
    })
    .execute()
}

/** Lets the run start: its site's and its account's turn came. The run worker claims it next (claimRuns). */
export async function admitRun(db: DbHandle, pid: string): Promise<void> {
  await db
    .updateTable('run')
    .set({ admitted_at: sql`now()` })
    .where('pid', '=', pid)
    .execute()
}

/** Seconds the recent successful runs of this action on the site took, averaged; 0 without history. */
export async function estimatedSeconds(db: DbHandle, siteId: string, action: RunAction): Promise<number> {
  const recent = db
    .selectFrom('run')
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

/**
 * Starts an attempt of up to `limit` admitted runs that no attempt holds, oldest admission first, in
 * one statement: rows another process is claiming are skipped, not waited for. A run handed back for
 * its retry is claimed again the same way, and its attempt counts up.
 */
export async function claimRuns(db: DbHandle, limit: number): Promise<Run[]> {
  const { rows } = await sql<Run>`
    UPDATE run SET status = 'running', attempt = attempt + 1, claimed_at = now(), heartbeat_at = now(),
      started_at = coalesce(started_at, now())
    WHERE pid IN (
      SELECT pid FROM run
      WHERE admitted_at IS NOT NULL AND claimed_at IS NULL AND status IN ('queued', 'running')
      ORDER BY admitted_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db)
  return rows
}

/**
 * Ends the attempt `attempt` of the run without ending the run: it is claimed again (its retry), or,
 * when `undo`, as if this attempt had not been claimed (a process that stops hands back what it
 * claimed before it started it). Returns the run, or nothing when the attempt no longer holds it.
 */
export async function releaseAttempt(db: DbHandle, pid: string, attempt: number, { undo = false } = {}): Promise<Run | undefined> {
  return db
    .updateTable('run')
    .set({ claimed_at: null, ...(undo ? { attempt: sql`attempt - 1` } : {}) })
    .where(heldBy(pid, attempt))
    .returningAll()
    .executeTakeFirst()
}

/** The heartbeat of the attempt that holds the run: what keeps the sweep (claimStaleRuns) off it. */
export async function beat(db: DbHandle, pid: string, attempt: number): Promise<void> {
  await db
    .updateTable('run')
    .set({ heartbeat_at: sql`now()` })
    .where(heldBy(pid, attempt))
    .execute()
}

/**
 * Ends the run. `attempt` fences a worker that was given up for dead but still finishes: only the
 * attempt that holds the run may end it. Returns the ended run, or nothing when it was not ours.
 */
export async function setRunEnded(db: DbHandle, pid: string, attempt: number, status: 'success' | 'failed', message: string): Promise<Run | undefined> {
  return db
    .updateTable('run')
    .set({ status, message, finished_at: sql`now()`, started_at: sql`coalesce(started_at, now())` })
    .where(heldBy(pid, attempt))
    .returningAll()
    .executeTakeFirst()
}

/**
 * The fence of a change an attempt makes to its run: only the attempt that holds it (running, claimed,
 * at that attempt) may. A worker given up for dead whose attempt still goes on changes nothing.
 */
function heldBy(pid: string, attempt: number) {
  return (eb: ExpressionBuilder<Database, 'run'>) =>
    eb.and([eb('pid', '=', pid), eb('attempt', '=', attempt), eb('status', '=', 'running'), eb('claimed_at', 'is not', null)])
}

/** When an attempt counts as lost: no heartbeat for `staleSeconds` (RUN_STALE_SECONDS), or running for `timeoutSeconds` (RUN_TIMEOUT_SECONDS). */
export interface StaleLimits {
  staleSeconds: number
  timeoutSeconds: number
}

/**
 * Claims the attempts that lost their process (no heartbeat for `staleSeconds`) or ran past
 * `timeoutSeconds` (RUN_TIMEOUT_SECONDS), at most 50, in one statement: their heartbeat moves to
 * `now`, which keeps other sweepers off them while this one hands them back, and rows another
 * sweeper holds are skipped, not waited for.
 */
export async function claimStaleRuns(db: DbHandle, limits: StaleLimits, now: Date): Promise<Run[]> {
  const { rows } = await sql<Run>`
    UPDATE run SET heartbeat_at = ${now}
    WHERE pid IN (
      SELECT pid FROM run
      WHERE status = 'running' AND claimed_at IS NOT NULL
        AND (coalesce(heartbeat_at, claimed_at) < now() - make_interval(secs => ${limits.staleSeconds})
             OR claimed_at < now() - make_interval(secs => ${limits.timeoutSeconds}))
      LIMIT 50
      FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db)
  return rows
}

/** The site a run is for, or undefined when it was deleted after the run was queued. */
export async function findRunSite(db: DbHandle, run: Pick<Run, 'account_id' | 'site_id'>): Promise<Site | undefined> {
  return db.selectFrom('site').selectAll().where('account_id', '=', run.account_id).where('id', '=', run.site_id).executeTakeFirst()
}

/**
 * Whether the site still exists once a delete of it that is under way has ended: KEY SHARE waits for
 * a delete's row lock, so a run that failed because of the delete does not see the site before the
 * delete commits.
 */
export async function siteExists(db: DbHandle, siteId: string): Promise<boolean> {
  return (await db.selectFrom('site').select('id').where('id', '=', siteId).forKeyShare().executeTakeFirst()) !== undefined
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

export interface ActiveRunCount {
  status: 'queued' | 'running'
  action: RunAction
  count: number
}

/**
 * Queued and running runs of every account, by action: what the operator's dashboard shows, across
 * all processes (they share the database), so no account filter. Written as two equalities, not an
 * IN list, so that the planner can take the partial indexes of queued and running runs (migration
 * 0003) and leave the finished runs, nearly all of the table, unread.
 */
export async function countActiveRuns(db: DbHandle): Promise<ActiveRunCount[]> {
  const rows = await db
    .selectFrom('run')
    .select(['status', 'action', (eb) => eb.fn.countAll<string>().as('count')])
    .where((eb) => eb.or([eb('status', '=', 'queued'), eb('status', '=', 'running')]))
    .groupBy(['status', 'action'])
    .execute()
  return rows.map((row) => ({ status: row.status === 'queued' ? 'queued' : 'running', action: row.action, count: Number(row.count) }))
}
