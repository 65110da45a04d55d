import { sql, type Transaction } from 'kysely'
import type { Database } from '../db/schema.js'
import { CHANNEL_STAGES, IMPORT_STAGE, inStage } from '../db/stage-keys.js'

// The rows of a site's import stage, as a build (build-stage.ts) writes them: the changes since the
// last build, or a rebuild from every source, and the columns that some row has a value for.

export type Trx = Transaction<Database>

export interface StageSource {
  dataSourceId: string
  streamId: string
  streamName: string
  importType: 1 | 2
  importEmpty: boolean
  /** A feed URL or SFTP source: its stream is its own, which no interface shows. */
  fetched: boolean
}

export interface StageSite {
  id: string
  account_id: string
  id_column: string
}

/**
 * Only the products changed since the last build: `changed_seq` orders a stream's applied changes.
 * Each id touched is recorded in stage_change under this build, for the channels' exports.
 */
export async function applyChanges(trx: Trx, site: StageSite, streamId: string, sinceSeq: string, build: string): Promise<number> {
  // Driven by the changed ids (an index lookup each), whatever the planner believes about the
  // stage's size right after a bulk build.
  const removed = await sql`
    WITH removed AS (
      DELETE FROM stage_product
      WHERE ${inStage('stage_product', site.id, IMPORT_STAGE)} AND product_id = ANY(ARRAY(
        SELECT product_id FROM stream_product WHERE stream_id = ${streamId} AND changed_seq > ${sinceSeq} AND data IS NULL
      ))
      RETURNING product_id
    )
    INSERT INTO stage_change (site_id, build, product_id) SELECT ${site.id}, ${build}, product_id FROM removed`.execute(trx)
  const { rows } = await sql<{ added: string }>`
    WITH upserted AS (
      INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data)
      SELECT ${site.id}, ${IMPORT_STAGE.stage}, ${IMPORT_STAGE.stageId}, product_id, ${site.account_id}, data
      FROM stream_product WHERE stream_id = ${streamId} AND changed_seq > ${sinceSeq} AND data IS NOT NULL
      -- In key order: the stage rows each one meets are neighbours, not random pages.
      ORDER BY product_id
      ON CONFLICT (site_id, stage, stage_id, product_id) DO UPDATE SET data = excluded.data
      RETURNING product_id, (xmax = 0) AS inserted
    ), recorded AS (
      INSERT INTO stage_change (site_id, build, product_id) SELECT ${site.id}, ${build}, product_id FROM upserted
    )
    SELECT count(*) FILTER (WHERE inserted) AS added FROM upserted`.execute(trx)
  return Number(rows[0]?.added ?? 0) - Number(removed.numAffectedRows ?? 0)
}

/**
 * Keeps stage_change to what an export may still ask for: the changes after the oldest build a
 * channel stage of the site was exported from. A channel whose exports keep failing would hold it
 * back forever, so once the log passes the stage's size (a full comparison is then as cheap) it is
 * dropped, and such a channel compares every row once. Returns the new changes_from.
 */
export async function boundChangeLog(trx: Trx, siteId: string, stageRows: number, changesFrom: string, build: string): Promise<string> {
  await sql`DELETE FROM stage_change WHERE site_id = ${siteId} AND build <= coalesce(
      (SELECT min(build) FROM site_stage WHERE site_id = ${siteId} AND stage = ${CHANNEL_STAGES}), ${build})`.execute(trx)
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM stage_change WHERE site_id = ${siteId}`.execute(trx)
  if (Number(rows[0]?.n ?? 0) <= Math.max(stageRows, 1000)) return changesFrom
  await trx.deleteFrom('stage_change').where('site_id', '=', siteId).execute()
  return build
}

export async function clearStage(trx: Trx, site: StageSite): Promise<number> {
  await trx
    .deleteFrom('stage_product')
    .where(inStage('stage_product', site.id, IMPORT_STAGE))
    .execute()
  return 0
}

export async function rebuild(trx: Trx, site: StageSite, mains: StageSource[], additions: StageSource[]): Promise<number> {
  await clearStage(trx, site)
  const mainIds = mains.map((main) => main.streamId)
  // Stacked main sources: DISTINCT ON keeps, for each id, the row of the last source listing it.
  const stacked =
    mainIds.length === 1
      ? sql`SELECT product_id, data FROM stream_product WHERE stream_id = ${mainIds[0]} AND data IS NOT NULL`
      : sql`SELECT DISTINCT ON (sp.product_id) sp.product_id, sp.data
            FROM stream_product sp JOIN unnest(${mainIds}::bigint[]) WITH ORDINALITY AS m(stream_id, position) ON sp.stream_id = m.stream_id
            WHERE sp.data IS NOT NULL
            ORDER BY sp.product_id, m.position DESC`
  // Additional sources add their attributes (not their id) to the main row whose id column matches.
  let data = sql`main.data`
  let joins = sql``
  additions.forEach((addition, i) => {
    const alias = sql.id(`add${i}`)
    data = sql`${data} || coalesce(${alias}.data - 'id', '{}'::jsonb)`
    joins = sql`${joins} LEFT JOIN stream_product ${alias} ON ${alias}.stream_id = ${addition.streamId}
      AND ${alias}.product_id = (main.data ->> ${site.id_column}) AND ${alias}.data IS NOT NULL`
  })
  const inserted = await sql`
    INSERT INTO stage_product (site_id, stage, stage_id, product_id, account_id, data)
    SELECT ${site.id}, ${IMPORT_STAGE.stage}, ${IMPORT_STAGE.stageId}, main.product_id, ${site.account_id}, ${data}
    FROM (${stacked}) AS main ${joins}`.execute(trx)
  return Number(inserted.numAffectedRows ?? 0)
}

/**
 * The stage's columns: the sources' attribute names in first-seen order, keeping those that some
 * row has a non-empty value for (docs/interface.md row rule 4). The EXISTS stops at the first row with a
 * value, so only a column that has vanished costs a scan.
 */
export async function filledColumns(trx: Trx, siteId: string, candidates: string[]): Promise<string[]> {
  if (candidates.length === 0) return []
  const { rows } = await sql<{ name: string }>`
    SELECT u.name FROM unnest(${candidates}::text[]) WITH ORDINALITY AS u(name, position)
    WHERE EXISTS (
      SELECT 1 FROM stage_product st
      WHERE ${inStage('st', siteId, IMPORT_STAGE)} AND coalesce(st.data ->> u.name, '') <> ''
    )
    ORDER BY u.position`.execute(trx)
  return rows.map((row) => row.name)
}
