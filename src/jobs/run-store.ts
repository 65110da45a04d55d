import type { DbHandle } from '../db/database.js'
import type { Process, ProcessAction, Site } from '../db/schema.js'

// Data access of the run actions (run-actions.ts), and the run counts the metrics read.

/** The site a run is for, or undefined when it was deleted after the run was queued. */
export async function findRunSite(db: DbHandle, run: Pick<Process, 'account_id' | 'site_id'>): Promise<Site | undefined> {
  return db.selectFrom('site').selectAll().where('account_id', '=', run.account_id).where('id', '=', run.site_id).executeTakeFirst()
}

export interface ActiveRunCount {
  status: 'queued' | 'running'
  action: ProcessAction
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
    .selectFrom('process')
    .select(['status', 'action', (eb) => eb.fn.countAll<string>().as('count')])
    .where((eb) => eb.or([eb('status', '=', 'queued'), eb('status', '=', 'running')]))
    .groupBy(['status', 'action'])
    .execute()
  return rows.map((row) => ({ status: row.status === 'queued' ? 'queued' : 'running', action: row.action, count: Number(row.count) }))
}
