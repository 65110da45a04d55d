import { sql, type RawBuilder } from 'kysely'
import type { DbHandle } from '../db/database.js'
import { isUuid } from '../db/ids.js'
import type { Run, RunStatus } from '../db/schema.js'

// What the run table tells a person: a site's runs as the console and the API list them, one run's
// live status, a site's latest run. The run's own life (its row from request to end) is
// run-store.ts; the operator's view across accounts, operator-runs.ts.

/**
 * A run's status as the console shows it: `success with warnings` for a successful run whose exports
 * left products out or were held by a safety stop, else the run's own status.
 */
export type ShownRunStatus = RunStatus | 'success with warnings'

/**
 * The shown status of the run `status`, `pid` name, in SQL: its exports are the channel_export rows of
 * its pid in the account; a held one has process_status `held`, one that left products out a count of
 * skipped products.
 */
export function shownStatus(status: RawBuilder<unknown>, pid: RawBuilder<unknown>, accountId: RawBuilder<unknown> | string): RawBuilder<ShownRunStatus> {
  return sql<ShownRunStatus>`CASE WHEN ${status} = 'success' AND EXISTS (
      SELECT 1 FROM channel_export x WHERE x.account_id = ${accountId} AND x.pid = ${pid}
        AND (x.process_status = 'held' OR x.product_count_skipped > 0)
    ) THEN 'success with warnings' ELSE ${status} END`
}

export interface RunPage {
  limit: number
  offset: number
}

/** A site's runs, newest first, each with its shown status, the number of its site errors and its product counts. */
export function siteRunsPage(db: DbHandle, accountId: string, siteId: string, page: RunPage) {
  return (
    db
      .selectFrom('run')
      // What its exports did, read once: the rows they published (a held export published nothing; its
      // release, under the same pid, did) and whether one left products out or was held.
      .leftJoinLateral(
        (eb) =>
          eb
            .selectFrom('channel_export as x')
            .select([
              sql<string | null>`sum(x.product_count_now) FILTER (WHERE x.process_status = 'success')`.as('exported'),
              sql<boolean>`coalesce(bool_or(x.process_status = 'held' OR x.product_count_skipped > 0), false)`.as('warned'),
            ])
            .whereRef('x.pid', '=', 'run.pid')
            .where('x.account_id', '=', accountId)
            .as('x'),
        (join) => join.onTrue(),
      )
      .select([
        'run.pid',
        'run.action',
        'run.target_id',
        'run.trigger',
        'run.status',
        'run.message',
        'run.attempt',
        'run.created_at',
        'run.started_at',
        'run.finished_at',
        'x.exported',
      ])
      .select(sql<ShownRunStatus>`CASE WHEN run.status = 'success' AND x.warned THEN 'success with warnings' ELSE run.status END`.as('shown_status'))
      .select((eb) =>
        eb
          .selectFrom('site_error')
          .select((inner) => inner.fn.countAll<string>().as('n'))
          .whereRef('site_error.pid', '=', 'run.pid')
          .where('site_error.account_id', '=', accountId)
          .as('error_count'),
      )
      // What its import did: the products it left in the stage.
      .select((eb) =>
        eb
          .selectFrom('import_history')
          .select('product_count')
          .whereRef('import_history.pid', '=', 'run.pid')
          .where('import_history.account_id', '=', accountId)
          .limit(1)
          .as('imported'),
      )
      .where('run.account_id', '=', accountId)
      .where('run.site_id', '=', siteId)
      .orderBy('run.created_at', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute()
  )
}

/** One run of the site with its shown status; none when the pid is no run of this site and account. */
export async function siteRun(db: DbHandle, accountId: string, siteId: string, pid: string): Promise<(Run & { shown_status: ShownRunStatus }) | undefined> {
  if (!isUuid(pid)) return undefined
  return db
    .selectFrom('run')
    .selectAll()
    .select(shownStatus(sql.ref('run.status'), sql.ref('run.pid'), accountId).as('shown_status'))
    .where('account_id', '=', accountId)
    .where('site_id', '=', siteId)
    .where('pid', '=', pid)
    .executeTakeFirst()
}

/** The pid of the site's latest run; none before its first. */
export async function latestRunPid(db: DbHandle, accountId: string, siteId: string): Promise<string | undefined> {
  const latest = await db
    .selectFrom('run')
    .select('pid')
    .where('account_id', '=', accountId)
    .where('site_id', '=', siteId)
    .orderBy('created_at', 'desc')
    .orderBy('pid', 'desc')
    .limit(1)
    .executeTakeFirst()
  return latest?.pid
}

/**
 * SQL: the latest run of the site aliased `site` (with its account), as a LATERAL subquery's body:
 * for a statement that lists sites with their latest run.
 */
export function latestRunOfSite(site: string): RawBuilder<unknown> {
  return sql`SELECT pid, action, status, created_at, started_at, finished_at, message FROM run
      WHERE site_id = ${sql.ref(`${site}.id`)} AND account_id = ${sql.ref(`${site}.account_id`)} ORDER BY created_at DESC LIMIT 1`
}
