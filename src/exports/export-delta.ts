import { sql, type RawBuilder } from 'kysely'
import type { CheckTotals, DeltaType } from '../db/schema.js'
import type { Tx } from '../db/transaction.js'
import { totalsOf } from './check-totals.js'
import type { ExportPlan } from './export-plan.js'
import { skippedLinesSql } from './skipped-file.js'
import { channelStage, inStage } from '../db/stage-keys.js'
import type { Referral } from '../db/referred-data.js'
import { linesPlan, renderedLinesPlan, type FeedFrame, type FeedPlan } from '../feeds/feed-sql.js'
import { quoter } from '../feeds/sql-quoter.js'

// The rows of an export against the previous export's. A first export stores them as they come.
// A later one classifies, into the temporary table export_rows, only the rows the import changed
// since the build the channel stage was exported from (stage_change), when the stage was made the
// way this export makes it; otherwise every row, once. Either way only what changed is written
// into the channel stage, and a line is rendered only for a row that is new or changed.
//
// The channel stage holds every row through the channel's filter, each with the checks it fails
// (issues); a row its template's checks leave out has no line. Two kinds of change therefore: a
// row's in the stage (kind: what to write) and in the feed (feed: what the delta files and counts
// say). They differ only for a row that enters or leaves the feed: a fixed product is new to the
// feed, a product that starts failing a required rule is deleted from it.

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

/**
 * A first export: nothing to compare with, so the rows and their lines go straight into the channel
 * stage; with lines rendered on read, the rows alone (lineBytes 0: the file's writing measures them).
 */
export async function storeFirstExport(tx: Tx, plan: ExportPlan): Promise<StageTotals & { checks: CheckTotals }> {
  const { site, channel } = plan
  const key = channelStage(channel.id)
  // Without lines stored, every row is in the feed (ExportPlan.linesOnRead).
  const line = plan.linesOnRead ? sql`NULL` : sql`CASE WHEN ${plan.leftOut('r.issues')} THEN NULL ELSE ${plan.line({ data: 'r.data', row: 'r' })} END`
  const inFeed = plan.linesOnRead ? sql`true` : sql`bytes IS NOT NULL`
  const values = sql`SELECT ${site.id}, ${key.stage}, ${key.stageId}, r.product_id, ${site.account_id}, ${plan.storedData('r')}, ${line}, r.issues, r.notes
      FROM (${plan.rows} OFFSET 0) AS r`
  if (plan.linesOnRead && !plan.checks) {
    // Nothing to count but the rows: no RETURNING, whose rows Postgres keeps to group them (1M rows: 5.4 s against 5.6 s).
    const inserted = await sql`INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data, line, issues, notes) ${values}`.execute(tx.db)
    const rows = Number(inserted.numAffectedRows ?? 0)
    return { rows, lineBytes: 0, checks: totalsOf(undefined, [{ issues: null, notes: null, inStage: true, inFeed: true, rows }]) }
  }
  const { rows } = await sql<{ issues: string | null; notes: string | null; in_feed: boolean; n: string; bytes: string | null }>`
    WITH stored AS (
      INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data, line, issues, notes) ${values}
      RETURNING octet_length(line) AS bytes, issues, notes
    )
    SELECT issues, notes, ${inFeed} AS in_feed, count(*) AS n, sum(bytes + 1) AS bytes FROM stored GROUP BY 1, 2, 3`.execute(tx.db)
  const checks = totalsOf(
    plan.checks,
    rows.map((row) => ({ issues: row.issues, notes: row.notes, inStage: true, inFeed: row.in_feed, rows: Number(row.n) })),
  )
  return { rows: checks.exported, lineBytes: rows.reduce((sum, row) => sum + Number(row.bytes ?? 0), 0), checks }
}

/** Counts of a first export: every row is new. */
export function firstExportCounts(now: number): ExportCounts {
  return { now, previous: 0, new: now, modified: 0, unchanged: 0, deleted: 0 }
}

async function createExportRows(tx: Tx): Promise<void> {
  // Neither logged nor indexed, dropped at the commit. `kind` is the row's change in the stage,
  // `feed` in the feed (null: in neither feed). `line` is the new line of a row new or modified in
  // the feed, the old one of a row deleted from it; old_bytes what a row's old line took; changed
  // whether rules changed the row (then its data is kept, never referred to).
  await sql`CREATE TEMP TABLE export_rows (product_id text COLLATE "C" NOT NULL, data jsonb NOT NULL, line text, kind text NOT NULL, old_bytes bigint,
      issues bigint, old_issues bigint, notes bigint, old_notes bigint, feed text, changed boolean NOT NULL)
    ON COMMIT DROP`.execute(tx.db)
}

/**
 * How the channel stage's rows were made: with every line rendered again, the previous lines
 * rendered on read, and laid out as this export's (the same format and columns).
 */
interface Classifying {
  renderAll: boolean
  previousOnRead: boolean
  sameLayout: boolean
  /** The columns of the previous export's lines (with sameLayout, this export's). */
  previousColumns: string[]
}

/**
 * The SELECT list of export_rows after product_id, for a row `r` of the export (null: gone) and `o`
 * of the channel stage (null: new), with `n.line` (renderedLine) the row's line where it needs one.
 * `renderAll`: every line of the feed is rendered again. `previousOnRead`: the stage's rows store no
 * line (every one is in the feed), and an old line is its data rendered, only for a row whose line
 * is gone or changed. A row in the feed before and after is modified in it when what the feed says
 * of it changed: where the lines are laid out as before (`sameLayout`) when its line changed (the
 * same data makes the same line only when the stage was made the same way); otherwise when one of
 * its values changed, in a column of either export (a missing value and an empty one are the same).
 */
function classifiedColumns(plan: ExportPlan, how: Classifying): RawBuilder<unknown> {
  const { renderAll, previousOnRead, sameLayout } = how
  const { inFeed, wasInFeed } = feedTests(plan, how)
  const oldLine = previousOnRead ? plan.line({ data: 'o.data' }) : sql`o.line`
  const sameData = sql`o.data = r.data`
  const sameInFeed = !sameLayout ? sameValues(plan, how) : renderAll ? sql`n.line = ${oldLine}` : sql`(${sameData} OR n.line = ${oldLine})`
  // A row leaving the feed, rendered again in a new way, is rendered as its data stands: its old
  // bits may be another template's, whose normalisation bits mean other checks.
  return sql`coalesce(r.data, o.data),
      CASE WHEN ${inFeed} THEN n.line
           WHEN ${wasInFeed} THEN ${renderAll ? plan.line({ data: 'o.data' }) : oldLine} END,
      CASE WHEN r.product_id IS NULL THEN 'deleted' WHEN o.product_id IS NULL THEN 'new' WHEN ${sameData} THEN 'unchanged' ELSE 'modified' END,
      CASE WHEN NOT ${inFeed} OR NOT ${sameData} THEN octet_length(${oldLine}) + 1 END, r.issues, o.issues, r.notes, o.notes,
      CASE WHEN ${inFeed} AND ${wasInFeed} THEN CASE WHEN ${sameInFeed} THEN 'unchanged' ELSE 'modified' END
           WHEN ${inFeed} THEN 'new' WHEN ${wasInFeed} THEN 'deleted' END,
      coalesce(r.changed, false)`
}

/** SQL: whether the export's row `r` is in this export's feed, and the channel stage's row `o` was in the previous one. */
function feedTests(plan: ExportPlan, { previousOnRead }: Classifying): { inFeed: RawBuilder<unknown>; wasInFeed: RawBuilder<unknown> } {
  return {
    inFeed: sql`(r.product_id IS NOT NULL AND NOT ${plan.leftOut('r.issues')})`,
    wasInFeed: previousOnRead ? sql`(o.product_id IS NOT NULL)` : sql`(o.line IS NOT NULL)`,
  }
}

/** SQL: the rows `o` and `r` have the same value in every column of the previous export and of this one ('' where none). */
function sameValues(plan: ExportPlan, { previousColumns }: Classifying): RawBuilder<unknown> {
  const columns = [...new Set([...previousColumns, ...plan.columns])]
  if (columns.length === 0) return sql`true`
  const value = (row: string, column: string) => `coalesce(${row}.data ->> ${quoter.escapeLiteral(column)}, '')`
  return sql.raw(`(${columns.map((column) => `${value('o', column)} = ${value('r', column)}`).join(' AND ')})`)
}

/**
 * The line of the export's row `r` where export_rows needs it, rendered once (OFFSET 0 keeps the
 * subquery from being folded into each place that reads it): a row new to the feed, changed, or
 * rendered anew; NULL otherwise.
 */
function renderedLine(plan: ExportPlan, how: Classifying): RawBuilder<unknown> {
  const { inFeed, wasInFeed } = feedTests(plan, how)
  const needed = how.renderAll ? inFeed : sql`${inFeed} AND (NOT ${wasInFeed} OR o.data <> r.data)`
  return sql`SELECT CASE WHEN ${needed} THEN ${plan.line({ data: 'r.data', row: 'r' })} END AS line OFFSET 0`
}

/**
 * Classifies the rows the import touched in the builds after `sinceBuild`: each is looked up by
 * its key in the import stage (through the channel's filter and mapping) and in the channel stage.
 * Every other row is unchanged, and costs nothing. Only called for a stage made as this export
 * makes it, so it refers to the import stage exactly when this export's rows do. Returns false, having classified nothing, when
 * more than a quarter of the stage's rows were touched: one pass over both stages is then cheaper.
 */
export async function classifyChanged(tx: Tx, plan: ExportPlan, sinceBuild: string, stageRows: number): Promise<boolean> {
  const { site } = plan
  await sql`CREATE TEMP TABLE changed_ids (product_id text COLLATE "C" PRIMARY KEY) ON COMMIT DROP`.execute(tx.db)
  const changed = await sql`INSERT INTO changed_ids SELECT DISTINCT product_id FROM stage_change WHERE site_id = ${site.id} AND build > ${sinceBuild}`.execute(
    tx.db,
  )
  if (Number(changed.numAffectedRows ?? 0) > Math.max(1000, stageRows / 4)) {
    await sql`DROP TABLE changed_ids`.execute(tx.db)
    return false
  }
  await createExportRows(tx)
  // Made as this export makes it: the same layout.
  const how = { renderAll: false, previousOnRead: plan.linesOnRead !== null, sameLayout: true, previousColumns: plan.columns }
  // Each changed id looked up by key, in key order (neighbours share pages), a LATERAL … LIMIT 1
  // each (the keys are unique): right after a
  // bulk load the stages' statistics may be missing or stale, and a planner that misjudges them
  // scans both stages whole instead (seconds at 1M rows, measured).
  await sql`INSERT INTO export_rows (product_id, data, line, kind, old_bytes, issues, old_issues, notes, old_notes, feed, changed)
    SELECT ch.product_id, ${classifiedColumns(plan, how)}
    FROM (SELECT product_id FROM changed_ids ORDER BY product_id) AS ch
    LEFT JOIN LATERAL (${plan.rowsWhere(sql`product_id = ch.product_id`)} LIMIT 1) AS r ON true
    LEFT JOIN LATERAL (${plan.channelRows(sql`c.product_id = ch.product_id`, plan.referral)} LIMIT 1) AS o ON true
    CROSS JOIN LATERAL (${renderedLine(plan, how)}) AS n
    WHERE r.product_id IS NOT NULL OR o.product_id IS NOT NULL`.execute(tx.db)
  return true
}

/**
 * Classifies every row of this export against the previous export in one hash join of the two
 * stages. With `renderAll` (the stage was made another way: other columns, filter, mapping or
 * format) every line is rendered again; otherwise only those of new and modified rows. With
 * `previousReferral` (the stage was saved with rows referring to the import stage) their data is
 * made from the import stage's rows as it was saved; with `previousOnRead`, it stored no lines. Leaves nested loops off until replaceStage.
 */
export async function classifyAll(tx: Tx, plan: ExportPlan, how: Classifying & { previousReferral: Referral | undefined }): Promise<void> {
  await createExportRows(tx)
  // Right after a bulk load the planner may believe the channel stage empty and pick a nested
  // loop that scans it once per row (minutes, measured). The joins of this export pair a large
  // side with the channel stage, where a hash join is always sound: no nested loops until the
  // stage is written.
  await sql`SET LOCAL enable_nestloop = off`.execute(tx.db)
  await sql`INSERT INTO export_rows (product_id, data, line, kind, old_bytes, issues, old_issues, notes, old_notes, feed, changed)
    SELECT coalesce(r.product_id, o.product_id), ${classifiedColumns(plan, how)}
    FROM (${plan.rows} OFFSET 0) AS r
    FULL JOIN (${plan.channelRows(sql`true`, how.previousReferral)}) AS o ON o.product_id = r.product_id
    CROSS JOIN LATERAL (${renderedLine(plan, how)}) AS n`.execute(tx.db)
}

/** How many rows of the channel stage an export inserts, updates and deletes. */
export interface StageChanges {
  inserted: number
  updated: number
  deleted: number
}

/** Counts of this export against the previous one (`previous` rows in the feed), from export_rows. */
export async function deltaCounts(tx: Tx, previous: number): Promise<ExportCounts & { lineBytesChange: number; stage: StageChanges }> {
  // Temporary tables have no statistics until analyzed: the planner would join the stage to a few
  // changed rows as if they were many (a nested loop over the stage per row, minutes at 1M rows).
  await sql`ANALYZE export_rows`.execute(tx.db)
  const { rows } = await sql<Record<'new' | 'modified' | 'deleted' | 'added' | 'removed' | 'inserted' | 'updated' | 'dropped', string>>`
    SELECT count(*) FILTER (WHERE feed = 'new') AS new, count(*) FILTER (WHERE feed = 'modified') AS modified,
      count(*) FILTER (WHERE feed = 'deleted') AS deleted,
      coalesce(sum(octet_length(line) + 1) FILTER (WHERE feed IN ('new', 'modified')), 0) AS added,
      coalesce(sum(old_bytes) FILTER (WHERE feed IN ('modified', 'deleted')), 0) AS removed,
      count(*) FILTER (WHERE kind = 'new') AS inserted, count(*) FILTER (WHERE kind = 'modified') AS updated,
      count(*) FILTER (WHERE kind = 'deleted') AS dropped
    FROM export_rows`.execute(tx.db)
  const n = (key: keyof NonNullable<(typeof rows)[0]>) => Number(rows[0]?.[key] ?? 0)
  return {
    previous,
    new: n('new'),
    modified: n('modified'),
    deleted: n('deleted'),
    unchanged: previous - n('modified') - n('deleted'),
    now: previous + n('new') - n('deleted'),
    lineBytesChange: n('added') - n('removed'),
    stage: { inserted: n('inserted'), updated: n('updated'), deleted: n('dropped') },
  }
}

/**
 * The channel stage becomes this export's rows (export_rows): only what changed is written, unless
 * every line was rendered again (`rewrite`), when the stage is replaced whole. A few changed rows
 * (`fewRows`) are found in the stage by key, many by one join. Nested loops are allowed again after.
 */
export async function replaceStage(tx: Tx, plan: ExportPlan, counts: StageChanges, how: { rewrite: boolean; fewRows: boolean }): Promise<void> {
  const { site, channel } = plan
  const key = channelStage(channel.id)
  const ofChannel = inStage('o', site.id, key)
  // By key, as in build-stage.ts: an index lookup each, whatever the planner believes of the stage.
  const rowsOf = (kind: string) => (how.fewRows ? sql`o.product_id = ANY(ARRAY(SELECT product_id FROM export_rows WHERE kind = ${kind}))` : sql`true`)
  // A row's line in the stage: its line while it is in the feed; export_rows has the old line of a row that left it.
  const stageLine = plan.linesOnRead ? sql`NULL` : sql`CASE WHEN n.feed IN ('new', 'modified', 'unchanged') THEN n.line END`
  const insert = (kinds: string[]) => sql`INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data, line, issues, notes)
      SELECT ${site.id}, ${key.stage}, ${key.stageId}, n.product_id, ${site.account_id}, ${plan.storedData('n')}, ${stageLine},
        n.issues, n.notes
      FROM export_rows n WHERE n.kind = ANY(${kinds})`
  if (how.rewrite) {
    await sql`DELETE FROM stage_product o WHERE ${ofChannel}`.execute(tx.db)
    await insert(['new', 'modified', 'unchanged']).execute(tx.db)
  } else {
    if (counts.deleted > 0) {
      await sql`DELETE FROM stage_product o USING export_rows n
        WHERE n.kind = 'deleted' AND ${ofChannel} AND ${rowsOf('deleted')} AND o.product_id = n.product_id`.execute(tx.db)
    }
    if (counts.updated > 0) {
      await sql`UPDATE stage_product o SET data = ${plan.storedData('n')}, line = ${stageLine}, issues = n.issues, notes = n.notes
        FROM export_rows n
        WHERE n.kind = 'modified' AND ${ofChannel} AND ${rowsOf('modified')} AND o.product_id = n.product_id`.execute(tx.db)
    }
    if (counts.inserted > 0) await insert(['new']).execute(tx.db)
    // A row changed and changed back since the last export kept a copy of its data (exported-data.ts): it refers again.
    if (plan.referral) {
      await sql`UPDATE stage_product o SET data = NULL FROM export_rows n
        WHERE n.kind = 'unchanged' AND ${ofChannel} AND ${rowsOf('unchanged')} AND o.product_id = n.product_id
          AND o.data IS NOT NULL AND o.issues IS NULL AND NOT n.changed`.execute(tx.db)
    }
  }
  await sql`RESET enable_nestloop`.execute(tx.db)
}

/** The bytes of the channel stage's lines, a newline each, read whole (after a full comparison). */
export async function stageLineBytes(tx: Tx, plan: ExportPlan): Promise<number> {
  const { rows } = await sql<{ bytes: string }>`SELECT coalesce(sum(octet_length(line) + 1), 0) AS bytes FROM stage_product
    WHERE ${inStage('stage_product', plan.site.id, channelStage(plan.channel.id))}`.execute(tx.db)
  return Number(rows[0]?.bytes ?? 0)
}

/**
 * A delta file's COPY: one kind of change in the feed from export_rows; the unchanged rows (after
 * replaceStage) are the feed's rows this export did not change in it, rendered as they are read
 * when the stage stores no lines; the skipped rows are the stage's rows left out of the feed.
 */
export function deltaFilePlan(type: DeltaType, plan: ExportPlan, frame: FeedFrame): FeedPlan {
  if (type === 'skipped') return linesPlan(skippedLinesSql(plan), frame)
  if (type !== 'unchanged') return linesPlan(`SELECT n.product_id, n.line FROM export_rows n WHERE n.feed = '${type}'`, frame)
  const changed = (alias: string) => `SELECT 1 FROM export_rows n WHERE n.product_id = ${alias}.product_id AND n.feed <> 'unchanged'`
  if (!plan.linesOnRead) return linesPlan(`SELECT o.product_id, o.line FROM ${plan.stageRows} AND o.line IS NOT NULL AND NOT EXISTS (${changed('o')})`, frame)
  const rowsSql = `SELECT s.product_id, s.data, s.import_data FROM (${plan.stageData.rowsSql}) s WHERE NOT EXISTS (${changed('s')})`
  return renderedLinesPlan(quoter, { rowsSql, valueSql: plan.stageData.valueSql, columns: plan.columns, format: plan.linesOnRead }, frame)
}
