import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Run } from '../db/schema.js'
import { getSite } from './sites.js'

/** One site as the console's overview shows it. */
export interface SiteSummary {
  id: string
  projectId: string
  projectName: string
  title: string
  status: string
  processingStatus: string
  lastRun: Pick<Run, 'pid' | 'action' | 'status' | 'created_at' | 'started_at' | 'finished_at' | 'message'> | null
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

/** A site's runs, newest first, each with the number of its site errors and its product counts. */
export async function listSiteRuns(db: DbHandle, accountId: string, siteSegment: string, page: RunPage) {
  const site = await getSite(db, accountId, siteSegment)
  const runs = await db
    .selectFrom('run')
    .select(['pid', 'action', 'target_id', 'trigger', 'status', 'message', 'attempt', 'created_at', 'started_at', 'finished_at'])
    .select((eb) =>
      eb
        .selectFrom('site_error')
        .select((inner) => inner.fn.countAll<string>().as('n'))
        .whereRef('site_error.pid', '=', 'run.pid')
        .where('site_error.account_id', '=', accountId)
        .as('error_count'),
    )
    // What the run did: the products its import left in the stage, and the rows its exports wrote.
    .select((eb) =>
      eb
        .selectFrom('import_history')
        .select('product_count')
        .whereRef('import_history.pid', '=', 'run.pid')
        .where('import_history.account_id', '=', accountId)
        .limit(1)
        .as('imported'),
    )
    .select((eb) =>
      eb
        .selectFrom('channel_export')
        .select((inner) => inner.fn.sum<string>('product_count_now').as('n'))
        .whereRef('channel_export.pid', '=', 'run.pid')
        .where('channel_export.account_id', '=', accountId)
        .as('exported'),
    )
    .where('account_id', '=', accountId)
    .where('site_id', '=', site.id)
    .orderBy('created_at', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute()
  return { site, runs }
}
