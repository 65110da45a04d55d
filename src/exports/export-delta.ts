import { sql } from 'kysely'
import type { ChannelFilename } from '../db/schema.js'
import type { Tx } from '../db/transaction.js'
import type { ExportPlan } from './export-plan.js'

// The rows of an export against the previous export's. A first export stores them as they come.
// A later one classifies, into the temporary table export_rows, only the rows the import changed
// since the build the channel stage was exported from (stage_change), when the stage was made the
// way this export makes it; otherwise every row, once. Either way only what changed is written
// into the channel stage, and a line is rendered only for a row that is new or changed.

// `OFFSET 0` keeps the export's rows a subquery of their own: flattened into the statement, a mapped
// row's object would be built again for every reference the line makes to it (15 columns, each
// read two or three times: a first export of 1M mapped rows took 4 minutes, measured).

export interface ExportCounts {
  now: number
  previous: number
  new: number
  modified: number
  unchanged: number
  deleted: number
}

/** The channel stage as this export leaves it: row count and the bytes of its lines, a newline each. */
export interface StageTotals {
  rows: number
  lineBytes: number
}

/** A first export: nothing to compare with, so the rows and their lines go straight into the channel stage. */
export async function storeFirstExport(tx: Tx, plan: ExportPlan): Promise<StageTotals> {
  const { site, channel } = plan
  const { rows } = await sql<{ n: string; bytes: string }>`
    WITH stored AS (
      INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data, line)
      SELECT ${site.id}, 'channel', ${channel.id}, r.product_id, ${site.account_id}, r.data, ${plan.line('r.data')} FROM (${plan.rows} OFFSET 0) AS r
      RETURNING octet_length(line) AS bytes
    )
    SELECT count(*) AS n, coalesce(sum(bytes + 1), 0) AS bytes FROM stored`.execute(tx.db)
  return { rows: Number(rows[0]?.n ?? 0), lineBytes: Number(rows[0]?.bytes ?? 0) }
}

/** Counts of a first export: every row is new. */
export function firstExportCounts(now: number): ExportCounts {
  return { now, previous: 0, new: now, modified: 0, unchanged: 0, deleted: 0 }
}

async function createExportRows(tx: Tx): Promise<void> {
  // Neither logged nor indexed, dropped at the commit. `line` is the new line of a new or modified
  // row, the old one of a deleted row; old_bytes what a modified or deleted row's old line took.
  await sql`CREATE TEMP TABLE export_rows (product_id text COLLATE "C" NOT NULL, data jsonb NOT NULL, line text, kind text NOT NULL, old_bytes bigint)
    ON COMMIT DROP`.execute(tx.db)
}

/**
 * Classifies the rows the import touched in the builds after `sinceBuild`: each is looked up by
 * its key in the import stage (through the channel's filter and mapping) and in the channel stage.
 * Every other row is unchanged, and costs nothing. Returns false, having classified nothing, when
 * more than a quarter of the stage's rows were touched: one pass over both stages is then cheaper.
 */
export async function classifyChanged(tx: Tx, plan: ExportPlan, sinceBuild: string, stageRows: number): Promise<boolean> {
  const { site, channel } = plan
  await sql`CREATE TEMP TABLE changed_ids (product_id text COLLATE "C" PRIMARY KEY) ON COMMIT DROP`.execute(tx.db)
  const changed = await sql`INSERT INTO changed_ids SELECT DISTINCT product_id FROM stage_change WHERE site_id = ${site.id} AND build > ${sinceBuild}`.execute(
    tx.db,
  )
  if (Number(changed.numAffectedRows ?? 0) > Math.max(1000, stageRows / 4)) {
    await sql`DROP TABLE changed_ids`.execute(tx.db)
    return false
  }
  await createExportRows(tx)
  // Each changed id looked up by key, in key order (neighbours share pages), a LATERAL … LIMIT 1
  // each (the keys are unique): right after a
  // bulk load the stages' statistics may be missing or stale, and a planner that misjudges them
  // scans both stages whole instead (seconds at 1M rows, measured).
  await sql`INSERT INTO export_rows (product_id, data, line, kind, old_bytes)
    SELECT c.product_id, coalesce(r.data, o.data),
      CASE WHEN r.product_id IS NULL THEN o.line WHEN o.product_id IS NULL OR o.data <> r.data THEN ${plan.line('r.data')} END,
      CASE WHEN r.product_id IS NULL THEN 'deleted' WHEN o.product_id IS NULL THEN 'new' WHEN o.data = r.data THEN 'unchanged' ELSE 'modified' END,
      octet_length(o.line) + 1
    FROM (SELECT product_id FROM changed_ids ORDER BY product_id) AS c
    LEFT JOIN LATERAL (${plan.rowsWhere(sql`product_id = c.product_id`)} LIMIT 1) AS r ON true
    LEFT JOIN LATERAL (SELECT product_id, data, line FROM stage_product
      WHERE site_id = ${site.id} AND stage = 'channel' AND stage_id = ${channel.id} AND product_id = c.product_id LIMIT 1) AS o ON true
    WHERE r.product_id IS NOT NULL OR o.product_id IS NOT NULL`.execute(tx.db)
  return true
}

/**
 * Classifies every row of this export against the previous export in one hash join of the two
 * stages. With `renderAll` (the stage was made another way: other columns, filter, mapping or
 * format) every line is rendered again; otherwise only those of new and modified rows. Leaves
 * nested loops off until replaceStage.
 */
export async function classifyAll(tx: Tx, plan: ExportPlan, renderAll: boolean): Promise<void> {
  const { site, channel } = plan
  await createExportRows(tx)
  // Right after a bulk load the planner may believe the channel stage empty and pick a nested
  // loop that scans it once per row (minutes, measured). The joins of this export pair a large
  // side with the channel stage, where a hash join is always sound: no nested loops until the
  // stage is written.
  await sql`SET LOCAL enable_nestloop = off`.execute(tx.db)
  const all = renderAll ? sql`true` : sql`false`
  await sql`INSERT INTO export_rows (product_id, data, line, kind, old_bytes)
    SELECT coalesce(r.product_id, o.product_id), coalesce(r.data, o.data),
      CASE WHEN r.product_id IS NULL THEN CASE WHEN ${all} OR o.line IS NULL THEN ${plan.line('o.data')} ELSE o.line END
           WHEN o.product_id IS NULL OR o.data <> r.data OR ${all} THEN ${plan.line('r.data')} END,
      CASE WHEN r.product_id IS NULL THEN 'deleted' WHEN o.product_id IS NULL THEN 'new' WHEN o.data = r.data THEN 'unchanged' ELSE 'modified' END,
      octet_length(o.line) + 1
    FROM (${plan.rows} OFFSET 0) AS r
    FULL JOIN (SELECT product_id, data, line FROM stage_product WHERE site_id = ${site.id} AND stage = 'channel' AND stage_id = ${channel.id}) AS o
      ON o.product_id = r.product_id`.execute(tx.db)
}

/** Counts of this export against the previous one (`previous` rows), from export_rows. */
export async function deltaCounts(tx: Tx, previous: number): Promise<ExportCounts & { lineBytesChange: number }> {
  // Temporary tables have no statistics until analyzed: the planner would join the stage to a few
  // changed rows as if they were many (a nested loop over the stage per row, minutes at 1M rows).
  await sql`ANALYZE export_rows`.execute(tx.db)
  const { rows } = await sql<{ new: string; modified: string; deleted: string; added: string; removed: string }>`
    SELECT count(*) FILTER (WHERE kind = 'new') AS new, count(*) FILTER (WHERE kind = 'modified') AS modified,
      count(*) FILTER (WHERE kind = 'deleted') AS deleted,
      coalesce(sum(octet_length(line) + 1) FILTER (WHERE kind IN ('new', 'modified')), 0) AS added,
      coalesce(sum(old_bytes) FILTER (WHERE kind IN ('modified', 'deleted')), 0) AS removed
    FROM export_rows`.execute(tx.db)
  const row = rows[0]
  const [added, modified, deleted] = [Number(row?.new ?? 0), Number(row?.modified ?? 0), Number(row?.deleted ?? 0)]
  return {
    previous,
    new: added,
    modified,
    deleted,
    unchanged: previous - modified - deleted,
    now: previous + added - deleted,
    lineBytesChange: Number(row?.added ?? 0) - Number(row?.removed ?? 0),
  }
}

/**
 * The channel stage becomes this export's rows (export_rows): only what changed is written, unless
 * every line was rendered again (`rewrite`), when the stage is replaced whole. A few changed rows
 * (`fewRows`) are found in the stage by key, many by one join. Nested loops are allowed again after.
 */
export async function replaceStage(tx: Tx, plan: ExportPlan, counts: ExportCounts, how: { rewrite: boolean; fewRows: boolean }): Promise<void> {
  const { site, channel } = plan
  const ofChannel = sql`o.site_id = ${site.id} AND o.stage = 'channel' AND o.stage_id = ${channel.id}`
  // By key, as in build-stage.ts: an index lookup each, whatever the planner believes of the stage.
  const rowsOf = (kind: string) => (how.fewRows ? sql`o.product_id = ANY(ARRAY(SELECT product_id FROM export_rows WHERE kind = ${kind}))` : sql`true`)
  const insert = (kinds: string[]) => sql`INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data, line)
      SELECT ${site.id}, 'channel', ${channel.id}, n.product_id, ${site.account_id}, n.data, n.line FROM export_rows n WHERE n.kind = ANY(${kinds})`
  if (how.rewrite) {
    await sql`DELETE FROM stage_product o WHERE ${ofChannel}`.execute(tx.db)
    await insert(['new', 'modified', 'unchanged']).execute(tx.db)
  } else {
    if (counts.deleted > 0) {
      await sql`DELETE FROM stage_product o USING export_rows n
        WHERE n.kind = 'deleted' AND ${ofChannel} AND ${rowsOf('deleted')} AND o.product_id = n.product_id`.execute(tx.db)
    }
    if (counts.modified > 0) {
      await sql`UPDATE stage_product o SET data = n.data, line = n.line FROM export_rows n
        WHERE n.kind = 'modified' AND ${ofChannel} AND ${rowsOf('modified')} AND o.product_id = n.product_id`.execute(tx.db)
    }
    if (counts.new > 0) await insert(['new']).execute(tx.db)
  }
  await sql`RESET enable_nestloop`.execute(tx.db)
}

/** The bytes of the channel stage's lines, a newline each, read whole (after a full comparison). */
export async function stageLineBytes(tx: Tx, plan: ExportPlan): Promise<number> {
  const { rows } = await sql<{ bytes: string }>`SELECT coalesce(sum(octet_length(line) + 1), 0) AS bytes FROM stage_product
    WHERE site_id = ${plan.site.id} AND stage = 'channel' AND stage_id = ${plan.channel.id}`.execute(tx.db)
  return Number(rows[0]?.bytes ?? 0)
}

/**
 * The lines a delta file gets, as a complete SELECT of (product_id, line) for COPY: one kind of
 * change from export_rows; the unchanged rows (after replaceStage) are the channel stage's rows
 * this export did not write.
 */
export function deltaLinesSql(type: NonNullable<ChannelFilename['type']>, plan: ExportPlan): string {
  if (type === 'unchanged') {
    const written = `SELECT 1 FROM export_rows n WHERE n.product_id = o.product_id AND n.kind <> 'unchanged'`
    return `SELECT o.product_id, o.line FROM ${plan.stageRows} AND NOT EXISTS (${written})`
  }
  return `SELECT n.product_id, n.line FROM export_rows n WHERE n.kind = '${type}'`
}
