import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { ChannelHold, CheckTotals } from '../db/schema.js'
import type { ExportStatus } from './channels.js'
import { ofChannelRow } from '../db/stage-keys.js'

// Where the channels of an account stand, for the console's overview: held by a safety
// stop, below their readiness threshold, or fine. One statement for the account's channels (bounded),
// one count of its held ones through the partial index on held channels.

/** A channel as the overview lists it. */
export interface ChannelState {
  siteId: string
  siteTitle: string
  channelId: string
  name: string
  /** The template its channel stage was checked with (or the channel's, before its first export). */
  template: string
  active: boolean
  exportStatus: ExportStatus
  hold: ChannelHold | null
  readinessThreshold: number | null
  /** The channel stage's counts, as checksOfChannel reads them; null before the channel's first export. */
  totals: CheckTotals | null
  /** When an export last wrote the channel stage. */
  checkedAt: Date | null
}

export interface ChannelStates {
  /** Held channels first, then those below their threshold, then by site and id; at most `limit`. */
  rows: ChannelState[]
  /** More channels than `rows` hold. */
  cut: boolean
  /** How many of the account's channels are held. */
  held: number
}

/**
 * The readiness (share of checked products without errors) of the channel stage `st`, in SQL, as
 * readinessOf computes it; null when nothing was checked. A stage exported before templates had no
 * checks: every row was exported (readiness 1).
 */
const READINESS = sql`CASE WHEN st.checks IS NULL THEN CASE WHEN st.row_count > 0 THEN 1 END
  WHEN (st.checks ->> 'checked')::numeric > 0
  THEN ((st.checks ->> 'checked')::numeric - (st.checks ->> 'withErrors')::numeric) / (st.checks ->> 'checked')::numeric END`

export async function channelStatesOfAccount(db: DbHandle, accountId: string, limit: number): Promise<ChannelStates> {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT c.id, c.name, c.site_id, s.title AS site_title, c.template, c.active, c.hold, c.readiness_threshold,
      st.checks, st.row_count, st.updated_at AS checked_at, st.site_id IS NOT NULL AS has_stage,
      EXISTS (SELECT 1 FROM feed_file f WHERE f.channel_id = c.id) AS has_files
    FROM channel c
    JOIN site s ON s.id = c.site_id AND s.account_id = c.account_id
    LEFT JOIN site_stage st ON st.account_id = c.account_id AND ${ofChannelRow('st', 'c')}
    CROSS JOIN LATERAL (SELECT ${READINESS} AS readiness) r
    WHERE c.account_id = ${accountId}
    ORDER BY c.hold IS NULL, coalesce(r.readiness < c.readiness_threshold, false) DESC, s.title, s.id, c.id
    LIMIT ${limit + 1}`.execute(db)
  const held = await db
    .selectFrom('channel')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('hold', 'is not', null)
    .executeTakeFirst()
  return { rows: rows.slice(0, limit).map(stateOf), cut: rows.length > limit, held: Number(held?.n ?? 0) }
}

function stateOf(row: Record<string, unknown>): ChannelState {
  const hold = (row.hold as ChannelHold | null) ?? null
  const checks = (row.checks as CheckTotals | null) ?? null
  const rowCount = Number(row.row_count ?? 0)
  const totals = row.has_stage
    ? (checks ?? { checked: rowCount, exported: rowCount, leftOut: 0, withErrors: 0, withWarnings: 0, exportedWithWarnings: 0, codes: {} })
    : null
  return {
    siteId: String(row.site_id),
    siteTitle: String(row.site_title),
    channelId: String(row.id),
    name: String(row.name),
    template: checks?.template ?? String(row.template),
    active: Boolean(row.active),
    exportStatus: hold !== null ? 'held' : row.has_files ? 'published' : 'not_exported',
    hold,
    readinessThreshold: row.readiness_threshold === null ? null : Number(row.readiness_threshold),
    totals,
    checkedAt: (row.checked_at as Date | null) ?? null,
  }
}
