import { sql, type RawBuilder } from 'kysely'
import type { DbHandle } from '../db/database.js'
import { isUuid } from '../db/ids.js'
import type { Run, RunStatus, Site } from '../db/schema.js'
import { NotFoundError } from '../errors.js'
import { getSite } from './sites.js'

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
function shownStatus(status: RawBuilder<unknown>, pid: RawBuilder<unknown>, accountId: RawBuilder<unknown> | string): RawBuilder<ShownRunStatus> {
  return sql<ShownRunStatus>`CASE WHEN ${status} = 'success' AND EXISTS (
      SELECT 1 FROM channel_export x WHERE x.account_id = ${accountId} AND x.pid = ${pid}
        AND (x.process_status = 'held' OR x.product_count_skipped > 0)
    ) THEN 'success with warnings' ELSE ${status} END`
}

/** One site as the console's overview shows it. */
export interface SiteSummary {
  id: string
  projectId: string
  projectName: string
  title: string
  status: string
  processingStatus: string
  lastRun: (Pick<Run, 'pid' | 'action' | 'status' | 'created_at' | 'started_at' | 'finished_at' | 'message'> & { shownStatus: ShownRunStatus }) | null
  /** Products of the latest import (the import stage's count then). */
  productCount: number | null
  /** Site errors of the latest run, by classification. */
  errors: { low: number; medium: number; high: number }
}

// One statement for every site of the account: its latest run and import, and the latest run's
// errors by classification, each through an index on (site, time).
export async function siteSummaries(db: DbHandle, accountId: string): Promise<SiteSummary[]> {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT s.id, s.project_id, p.name AS project_name, s.title, s.status, s.processing_status,
      r.pid, r.action, r.status AS run_status, r.created_at, r.started_at, r.finished_at, r.message,
      ${shownStatus(sql.ref('r.status'), sql.ref('r.pid'), sql.ref('s.account_id'))} AS shown_status,
      h.product_count,
      coalesce(e.low, 0) AS low, coalesce(e.medium, 0) AS medium, coalesce(e.high, 0) AS high
    FROM site s
    JOIN project p ON p.id = s.project_id AND p.account_id = s.account_id
    LEFT JOIN LATERAL (
      SELECT pid, action, status, created_at, started_at, finished_at, message FROM run
      WHERE site_id = s.id AND account_id = s.account_id ORDER BY created_at DESC LIMIT 1
    ) r ON true
    LEFT JOIN LATERAL (
      SELECT product_count FROM import_history WHERE site_id = s.id AND account_id = s.account_id ORDER BY id DESC LIMIT 1
    ) h ON true
    LEFT JOIN LATERAL (
      SELECT count(*) FILTER (WHERE classification = 'low') AS low, count(*) FILTER (WHERE classification = 'medium') AS medium,
        count(*) FILTER (WHERE classification = 'high') AS high
      FROM site_error WHERE site_id = s.id AND account_id = s.account_id AND pid = r.pid
    ) e ON true
    WHERE s.account_id = ${accountId}
    ORDER BY p.name, s.title, s.id`.execute(db)
  return rows.map((row) => ({
    id: String(row.id),
    projectId: String(row.project_id),
    projectName: String(row.project_name),
    title: String(row.title),
    status: String(row.status),
    processingStatus: String(row.processing_status),
    lastRun: row.pid
      ? {
          pid: String(row.pid),
          action: row.action as Run['action'],
          status: row.run_status as Run['status'],
          created_at: row.created_at as Date,
          started_at: row.started_at as Date | null,
          finished_at: row.finished_at as Date | null,
          message: String(row.message ?? ''),
          shownStatus: row.shown_status as ShownRunStatus,
        }
      : null,
    productCount: row.product_count === null || row.product_count === undefined ? null : Number(row.product_count),
    errors: { low: Number(row.low), medium: Number(row.medium), high: Number(row.high) },
  }))
}

export interface RunPage {
  limit: number
  offset: number
}

/** A site's runs, newest first, each with its shown status, the number of its site errors and its product counts. */
export async function listSiteRuns(db: DbHandle, accountId: string, siteSegment: string, page: RunPage) {
  const site = await getSite(db, accountId, siteSegment)
  const runs = await db
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
    .where('run.site_id', '=', site.id)
    .orderBy('run.created_at', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute()
  return { site, runs }
}

/** One run of the site, as the console's live status shows it; another account's or site's run is not found. */
export async function siteRunStatus(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  pid: string,
): Promise<{ site: Site; run: Run; shownStatus: ShownRunStatus }> {
  const site = await getSite(db, accountId, siteSegment)
  const found = isUuid(pid)
    ? await db
        .selectFrom('run')
        .selectAll()
        .select(shownStatus(sql.ref('run.status'), sql.ref('run.pid'), accountId).as('shown_status'))
        .where('account_id', '=', accountId)
        .where('site_id', '=', site.id)
        .where('pid', '=', pid)
        .executeTakeFirst()
    : undefined
  if (!found) throw new NotFoundError(`Process ${pid.slice(0, 64)} of site ${site.id} not found`)
  const { shown_status: shown, ...run } = found
  return { site, run, shownStatus: shown }
}
