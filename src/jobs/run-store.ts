import type { DbHandle } from '../db/database.js'
import type { Process, Site } from '../db/schema.js'

// Data access of the run actions (run-actions.ts).

/** The site a run is for, or undefined when it was deleted after the run was queued. */
export async function findRunSite(db: DbHandle, run: Pick<Process, 'account_id' | 'site_id'>): Promise<Site | undefined> {
  return db.selectFrom('site').selectAll().where('account_id', '=', run.account_id).where('id', '=', run.site_id).executeTakeFirst()
}
