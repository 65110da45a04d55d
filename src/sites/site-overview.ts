import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Run, Site } from '../db/schema.js'
import { latestRunOfSite, shownStatus, siteRun, siteRunsPage, type RunPage, type ShownRunStatus } from '../runs/run-reports.js'
import { NotFoundError } from '../errors.js'
import { getSite } from './sites.js'

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
    LEFT JOIN LATERAL (${latestRunOfSite('s')}) r ON true
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

/** A site's runs, newest first, each with its shown status, the number of its site errors and its product counts. */
export async function listSiteRuns(db: DbHandle, accountId: string, siteSegment: string, page: RunPage) {
  const site = await getSite(db, accountId, siteSegment)
  return { site, runs: await siteRunsPage(db, accountId, site.id, page) }
}

/** One run of the site, as the console's live status shows it; another account's or site's run is not found. */
export async function siteRunStatus(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  pid: string,
): Promise<{ site: Site; run: Run; shownStatus: ShownRunStatus }> {
  const site = await getSite(db, accountId, siteSegment)
  const found = await siteRun(db, accountId, site.id, pid)
  if (!found) throw new NotFoundError(`Process ${pid.slice(0, 64)} of site ${site.id} not found`)
  const { shown_status: shown, ...run } = found
  return { site, run, shownStatus: shown }
}
