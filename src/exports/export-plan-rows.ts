import { sql, type RawBuilder } from 'kysely'
import type { Channel, ColumnMapping, Site } from '../db/schema.js'
import type { RenderedFormat, RenderedRows } from '../feeds/feed-sql.js'
import { quoter } from '../feeds/sql-quoter.js'
import { intermediateRows } from '../rules/intermediate-stage.js'
import type { RuleSpec } from '../rules/rule-types.js'
import { channelStage, IMPORT_STAGE, inStage, inStageText, sameImportRow } from '../db/stage-keys.js'
import { stageRowDataText, type Referral } from '../db/referred-data.js'

// The stages an export plan reads (export-plan.ts), as SQL: the import stage's rows through the
// site's rules, the same rows as text for a COPY, and the channel stage's rows with the data of
// those that refer to the import stage's.

/** ExportPlan.importRows: the import stage's rows, each column's value read through the mapping. */
export function importRowsOf(siteId: string, how: { columns: string[]; format: RenderedFormat; mapping: ColumnMapping[] | undefined }): RenderedRows {
  const mapped = new Map(how.mapping?.map((m) => [m.column, m]))
  const valueSql = (column: string) => {
    const m = mapped.get(column)
    if (!how.mapping || !m) return `s.data ->> ${quoter.escapeLiteral(column)}`
    return 'source' in m ? `s.data ->> ${quoter.escapeLiteral(m.source)}` : quoter.escapeLiteral(m.value)
  }
  const rowsSql = `SELECT s.product_id, s.data FROM stage_product s WHERE ${inStageText('s', siteId, IMPORT_STAGE)}`
  return { rowsSql, columns: how.columns, format: how.format, valueSql }
}

/** ExportPlan.channelRows of this channel: the rows its stage keeps, with the data referring rows made from the import stage's. */
export function channelRowsOf(site: Site, channel: Channel): (also: RawBuilder<unknown>, referral: Referral | undefined) => RawBuilder<unknown> {
  return (also, referral) => {
    const ofChannel = sql`${inStage('c', site.id, channelStage(channel.id))} AND ${also}`
    if (!referral) return sql`SELECT c.product_id, c.data, c.line, c.issues, c.notes FROM stage_product c WHERE ${ofChannel}`
    return sql`SELECT c.product_id, ${sql.raw(stageRowDataText('c', 'i', referral))} AS data, c.line, c.issues, c.notes
      FROM stage_product c LEFT JOIN stage_product i
        ON c.data IS NULL AND ${sameImportRow('i', 'c', site.id)}
      WHERE ${ofChannel}`
  }
}

/**
 * The mapping a mapped channel's rows refer with: its own, then each column its rules add as a row
 * they change nothing in has it (export-rows.ts ruleLevel): one they write, read from the row as it
 * is; one they only name (an exclude's attribute), empty.
 */
export function referredMapping(mapping: ColumnMapping[], columns: string[], written: string[]): ColumnMapping[] {
  const mapped = new Set(mapping.map((m) => m.column))
  const added = columns.filter((column) => !mapped.has(column))
  return [...mapping, ...added.map((column) => (written.includes(column) ? { column, source: column } : { column, value: '' }))]
}

/**
 * SELECT product_id, data, changed: the intermediate stage's rows (the import stage's through the
 * site's rules) that `also` (over import stage rows) selects and the channel's filter keeps. The
 * filter reads the intermediate stage's data, built once per row (OFFSET 0) before it is tested.
 */
export function sourceRows(siteId: string, rules: RuleSpec[], condition: RawBuilder<unknown>, also: RawBuilder<unknown>): RawBuilder<unknown> {
  if (rules.length === 0) {
    return sql`SELECT product_id, data, false AS changed FROM stage_product
      WHERE ${inStage('stage_product', siteId, IMPORT_STAGE)} AND ${condition} AND ${also}`
  }
  return sql`SELECT product_id, data, changed FROM (${intermediateRows(siteId, rules, also)} OFFSET 0) AS stage_product WHERE ${condition}`
}
