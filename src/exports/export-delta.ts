import { sql } from 'kysely'
import type { ChannelFilename } from '../db/schema.js'
import type { Tx } from '../db/transaction.js'
import type { ExportPlan } from './export-plan.js'

// The rows of an export against the previous export's: a first export stores them as they come;
// any later one classifies each row (new, modified, unchanged) in one pass, then writes only what
// changed into the channel stage.

export interface ExportCounts {
  now: number
  previous: number
  new: number
  modified: number
  unchanged: number
  deleted: number
}

/** A first export: nothing to compare with, so the rows go straight into the channel stage. Returns how many. */
export async function storeFirstExport(tx: Tx, plan: ExportPlan): Promise<number> {
  const { site, channel } = plan
  // Kysely reports an INSERT's row count (numAffectedRows) for a raw statement as well.
  const inserted = await sql`INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data)
              SELECT ${site.id}, 'channel', ${channel.id}, r.product_id, ${site.account_id}, r.data FROM (${plan.rows}) AS r`.execute(tx.db)
  return Number(inserted.numAffectedRows ?? 0n)
}

/** Counts of a first export: every row is new. */
export function firstExportCounts(now: number): ExportCounts {
  return { now, previous: 0, new: now, modified: 0, unchanged: 0, deleted: 0 }
}

/**
 * Classifies each row of this export against the previous export as it is stored, into the
 * temporary table `export_rows` (neither logged nor indexed, dropped at the commit): one merge join
 * of two inputs in product order, instead of a join per question asked later. Leaves nested loops
 * off until resetNestedLoops, after the stage is written.
 */
export async function classifyRows(tx: Tx, plan: ExportPlan, previous: number): Promise<ExportCounts> {
  const { site, channel } = plan
  await sql`CREATE TEMP TABLE export_rows (product_id text COLLATE "C" NOT NULL, data jsonb NOT NULL, kind text NOT NULL) ON COMMIT DROP`.execute(tx.db)
  // Right after a bulk load the planner may believe the channel stage empty and pick a nested
  // loop that scans it once per row (minutes, measured). The joins of this export pair a large
  // side with the channel stage, where a hash join is always sound: no nested loops until the
  // stage is written.
  await sql`SET LOCAL enable_nestloop = off`.execute(tx.db)
  await sql`INSERT INTO export_rows (product_id, data, kind)
              SELECT r.product_id, r.data, CASE WHEN o.product_id IS NULL THEN 'new' WHEN o.data = r.data THEN 'unchanged' ELSE 'modified' END
              FROM (${plan.rows}) AS r
              LEFT JOIN stage_product o
                ON o.site_id = ${site.id} AND o.stage = 'channel' AND o.stage_id = ${channel.id} AND o.product_id = r.product_id`.execute(tx.db)
  return deltaCounts(tx, previous)
}

/** Counts of this export against the previous one, from the rows' kinds. */
async function deltaCounts(tx: Tx, previous: number): Promise<ExportCounts> {
  const { rows } = await sql<{ kind: string; n: string }>`SELECT kind, count(*) AS n FROM export_rows GROUP BY kind`.execute(tx.db)
  const of = (kind: string) => Number(rows.find((row) => row.kind === kind)?.n ?? 0)
  const counts = { previous, new: of('new'), modified: of('modified'), unchanged: of('unchanged') }
  return { ...counts, now: counts.new + counts.modified + counts.unchanged, deleted: previous - counts.modified - counts.unchanged }
}

/** The channel stage becomes this export's rows (classifyRows), writing only what changed; nested loops are allowed again after. */
export async function replaceStage(tx: Tx, plan: ExportPlan, counts: ExportCounts): Promise<void> {
  const { site, channel } = plan
  const ofChannel = sql`o.site_id = ${site.id} AND o.stage = 'channel' AND o.stage_id = ${channel.id}`
  if (counts.deleted > 0) {
    await sql`DELETE FROM stage_product o WHERE ${ofChannel} AND NOT EXISTS (SELECT 1 FROM export_rows n WHERE n.product_id = o.product_id)`.execute(tx.db)
  }
  if (counts.modified > 0) {
    await sql`UPDATE stage_product o SET data = n.data FROM export_rows n WHERE n.kind = 'modified' AND ${ofChannel} AND o.product_id = n.product_id`.execute(
      tx.db,
    )
  }
  if (counts.new > 0) {
    await sql`INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data)
      SELECT ${site.id}, 'channel', ${channel.id}, n.product_id, ${site.account_id}, n.data FROM export_rows n WHERE n.kind = 'new'`.execute(tx.db)
  }
  await sql`RESET enable_nestloop`.execute(tx.db)
}

/**
 * The rows a file gets, as a complete SELECT for COPY: a delta file one kind of change against the
 * previous export (before the stage is replaced), a full file the channel stage (after).
 */
export function fileRowsSql(type: ChannelFilename['type'], plan: ExportPlan): string {
  const old = plan.previousRows
  if (type === null) return `SELECT o.product_id, o.data FROM ${old}`
  if (type === 'deleted') return `SELECT o.product_id, o.data FROM ${old} AND NOT EXISTS (SELECT 1 FROM export_rows n WHERE n.product_id = o.product_id)`
  return `SELECT n.product_id, n.data FROM export_rows n WHERE n.kind = '${type}'`
}
