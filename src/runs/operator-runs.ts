import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { RunAction, RunStatus } from '../db/schema.js'
import { bounded, type Bounded } from '../db/bounded-list.js'

// The runs of every account at once, for the operator's view of the console: the only reads of the
// run table that cross accounts (the guard lets only an operator session reach them).

export interface ActiveRun {
  pid: string
  accountId: string
  accountName: string
  siteId: string
  siteTitle: string
  action: RunAction
  status: RunStatus
  trigger: string
  createdAt: Date
  startedAt: Date | null
}

/** Runs queued or running on any account, running first, then the longest waiting. */
export async function activeRunsOfAllAccounts(db: DbHandle, limit: number): Promise<Bounded<ActiveRun>> {
  const rows = await db
    .selectFrom('run as p')
    .innerJoin('site as s', (join) => join.onRef('s.id', '=', 'p.site_id').onRef('s.account_id', '=', 'p.account_id'))
    .innerJoin('account as a', 'a.id', 'p.account_id')
    .select(['p.pid', 'p.account_id', 'a.name', 'p.site_id', 's.title', 'p.action', 'p.status', 'p.trigger', 'p.created_at', 'p.started_at'])
    .where('p.status', 'in', ['queued', 'running'])
    .orderBy(sql`p.status = 'running'`, 'desc')
    .orderBy('p.created_at')
    .limit(limit + 1)
    .execute()
  const runs = rows.map((row) => ({
    pid: row.pid,
    accountId: row.account_id,
    accountName: row.name,
    siteId: row.site_id,
    siteTitle: row.title,
    action: row.action,
    status: row.status,
    trigger: row.trigger,
    createdAt: row.created_at,
    startedAt: row.started_at,
  }))
  return bounded(runs, limit)
}

export interface SiteRunStats {
  siteId: string
  siteTitle: string
  accountId: string
  accountName: string
  runs: number
  failed: number
  /** The longest run that ended in the period, in seconds; null when none ended. */
  slowestSeconds: number | null
  /** The message of the latest failed run. */
  lastFailure: string | null
}

/**
 * Sites of every account by their runs queued since `since`: the failing ones (most failed runs
 * first) or the slowest (longest ended run first). Each site's runs are read through its index on
 * (site, time), so the work grows with the number of sites and their recent runs only.
 */
export async function siteRunStats(db: DbHandle, since: Date, order: 'failing' | 'slowest', limit: number): Promise<Bounded<SiteRunStats>> {
  const filter = order === 'failing' ? sql`r.failed > 0` : sql`r.slowest_seconds IS NOT NULL`
  const orderBy = order === 'failing' ? sql`r.failed DESC, r.runs DESC, s.id` : sql`r.slowest_seconds DESC, s.id`
  const { rows } = await sql<Record<string, unknown>>`
    SELECT s.id, s.title, s.account_id, a.name AS account_name, r.runs, r.failed, r.slowest_seconds,
      (SELECT message FROM run WHERE site_id = s.id AND status = 'failed' AND created_at >= ${since}
        ORDER BY created_at DESC LIMIT 1) AS last_failure
    FROM site s
    JOIN account a ON a.id = s.account_id
    CROSS JOIN LATERAL (
      SELECT count(*) AS runs, count(*) FILTER (WHERE status = 'failed') AS failed,
        max(extract(epoch FROM finished_at - started_at)) AS slowest_seconds
      FROM run WHERE site_id = s.id AND account_id = s.account_id AND created_at >= ${since}
    ) r
    WHERE ${filter}
    ORDER BY ${orderBy}
    LIMIT ${limit + 1}`.execute(db)
  const sites = rows.map((row) => ({
    siteId: String(row.id),
    siteTitle: String(row.title),
    accountId: String(row.account_id),
    accountName: String(row.account_name),
    runs: Number(row.runs),
    failed: Number(row.failed),
    slowestSeconds: row.slowest_seconds === null ? null : Number(row.slowest_seconds),
    lastFailure: row.last_failure === null ? null : String(row.last_failure),
  }))
  return bounded(sites, limit)
}
