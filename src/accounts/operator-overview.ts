import { activeRunsOfAllAccounts, siteRunStats } from '../runs/operator-runs.js'
import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { ChannelHold, StreamStatus } from '../db/schema.js'
import { ofChannelRow } from '../db/stage-keys.js'
import { bounded, type Bounded } from '../db/bounded-list.js'

// What the operator's view of the console reads: every account at once, the only queries of the
// console that cross accounts (the guard lets only an operator session reach them). Each list is
// bounded; `cut` says that more rows matched than it holds. Their runs are src/runs/operator-runs.ts.

export interface AccountObjects {
  id: string
  name: string
  createdAt: Date
  projects: number
  sites: number
  streams: number
  channels: number
  webhooks: number
}

/** Accounts, oldest first, with how many of each object they hold (live streams only). */
export async function accountObjectCounts(db: DbHandle, limit: number): Promise<Bounded<AccountObjects>> {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT a.id, a.name, a.created_at,
      (SELECT count(*) FROM project WHERE account_id = a.id) AS projects,
      (SELECT count(*) FROM site WHERE account_id = a.id) AS sites,
      (SELECT count(*) FROM stream WHERE account_id = a.id AND deleted_at IS NULL AND NOT source_owned) AS streams,
      (SELECT count(*) FROM channel WHERE account_id = a.id) AS channels,
      (SELECT count(*) FROM webhook WHERE account_id = a.id) AS webhooks
    FROM account a
    ORDER BY a.id
    LIMIT ${limit + 1}`.execute(db)
  const accounts = rows.map((row) => ({
    id: String(row.id),
    name: String(row.name),
    createdAt: row.created_at as Date,
    projects: Number(row.projects),
    sites: Number(row.sites),
    streams: Number(row.streams),
    channels: Number(row.channels),
    webhooks: Number(row.webhooks),
  }))
  return bounded(accounts, limit)
}

export interface StreamState {
  id: string
  name: string
  type: string
  status: StreamStatus
  accountId: string
  accountName: string
  updatedAt: Date
}

/** Live streams of every account (or of one), those not active first; with the count of each status. */
export async function streamStatesOfAllAccounts(
  db: DbHandle,
  limit: number,
  accountId?: string,
): Promise<Bounded<StreamState> & { byStatus: Partial<Record<StreamStatus, number>> }> {
  let query = db
    .selectFrom('stream as s')
    .innerJoin('account as a', 'a.id', 's.account_id')
    .select(['s.id', 's.name', 's.type', 's.status', 's.account_id', 'a.name as account_name', 's.updated_at'])
    .where('s.deleted_at', 'is', null)
    .where('s.source_owned', '=', false)
  if (accountId !== undefined) query = query.where('s.account_id', '=', accountId)
  const rows = await query
    .orderBy(sql`s.status = 'active'`)
    .orderBy('s.id')
    .limit(limit + 1)
    .execute()
  let counts = db
    .selectFrom('stream')
    .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
    .where('deleted_at', 'is', null)
    .where('source_owned', '=', false)
  if (accountId !== undefined) counts = counts.where('account_id', '=', accountId)
  const byStatus = Object.fromEntries((await counts.groupBy('status').execute()).map((row) => [row.status, Number(row.n)]))
  const streams = rows.map((row) => ({
    id: row.id,
    name: row.name,
    type: row.type,
    status: row.status,
    accountId: row.account_id,
    accountName: row.account_name,
    updatedAt: row.updated_at,
  }))
  return { ...bounded(streams, limit), byStatus }
}

export interface ChannelAttention {
  accountId: string
  accountName: string
  siteId: string
  siteTitle: string
  channelId: string
  channelName: string
  /** The share of checked products without errors after the last export; null when none was checked. */
  readiness: number | null
  threshold: number | null
  hold: ChannelHold | null
  /** When an export last wrote the channel stage (the readiness is of then). */
  checkedAt: Date | null
}

/**
 * Channels of every account held by a safety stop (longest held first) or whose readiness is below
 * their readiness_threshold (lowest first). Readiness as readinessOf computes it from the channel
 * stage's counts; a stage without counts (exported before templates) exported every row.
 */
export async function channelsNeedingAttention(db: DbHandle, limit: number): Promise<Bounded<ChannelAttention>> {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT c.account_id, a.name AS account_name, c.site_id, s.title AS site_title, c.id, c.name, c.readiness_threshold, c.hold,
      r.readiness, st.updated_at AS checked_at
    FROM channel c
    JOIN site s ON s.id = c.site_id AND s.account_id = c.account_id
    JOIN account a ON a.id = c.account_id
    LEFT JOIN site_stage st ON st.account_id = c.account_id AND ${ofChannelRow('st', 'c')}
    CROSS JOIN LATERAL (
      SELECT CASE WHEN (st.checks ->> 'checked')::numeric > 0
        THEN ((st.checks ->> 'checked')::numeric - (st.checks ->> 'withErrors')::numeric) / (st.checks ->> 'checked')::numeric END AS readiness
    ) r
    WHERE c.hold IS NOT NULL OR (c.readiness_threshold IS NOT NULL AND r.readiness < c.readiness_threshold)
    ORDER BY c.hold IS NULL, c.hold ->> 'held_at', r.readiness, c.id
    LIMIT ${limit + 1}`.execute(db)
  const channels = rows.map((row) => ({
    accountId: String(row.account_id),
    accountName: String(row.account_name),
    siteId: String(row.site_id),
    siteTitle: String(row.site_title),
    channelId: String(row.id),
    channelName: String(row.name),
    readiness: row.readiness === null ? null : Number(row.readiness),
    threshold: row.readiness_threshold === null ? null : Number(row.readiness_threshold),
    hold: (row.hold as ChannelHold | null) ?? null,
    checkedAt: (row.checked_at as Date | null) ?? null,
  }))
  return bounded(channels, limit)
}

/** How much of each list the operator's view shows at most, and over which window it counts the sites' runs. */
export interface OperatorOverviewRequest {
  now: Date
  /** The sites' failing and slowest runs are counted since this long before `now`. */
  windowMs: number
  /** The one account whose streams are listed; all when undefined. */
  streamAccount: string | undefined
  shown: { accounts: number; runs: number; sites: number; streams: number; channels: number }
}

/** Everything the operator's view reads, across accounts, in one call. */
export async function operatorOverview(db: DbHandle, request: OperatorOverviewRequest) {
  const { now, windowMs, streamAccount, shown } = request
  const since = new Date(now.getTime() - windowMs)
  const [accounts, runs, failing, slowest, streams, channels] = await Promise.all([
    accountObjectCounts(db, shown.accounts),
    activeRunsOfAllAccounts(db, shown.runs),
    siteRunStats(db, since, 'failing', shown.sites),
    siteRunStats(db, since, 'slowest', shown.sites),
    streamStatesOfAllAccounts(db, shown.streams, streamAccount),
    channelsNeedingAttention(db, shown.channels),
  ])
  return { accounts, runs, failing, slowest, streams, channels }
}

export type OperatorOverview = Awaited<ReturnType<typeof operatorOverview>>
