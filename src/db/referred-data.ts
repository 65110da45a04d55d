import pg from 'pg'
import type { ColumnMapping } from './schema.js'

// A channel stage row that refers to the import stage keeps no data of its own (data NULL): it
// stands for the import stage's row of the same id, as the channel's export makes it when no rule
// changes it (src/imports/exported-data.ts). For a channel without a mapping that is the import
// row's data as it is; for a mapped one, the import row mapped: each output column from the row's
// attribute ('' where it has none) or a constant. The mapping a stage's rows refer with is saved
// with the stage (site_stage.refers_mapping), so that its rows are read as they were exported even
// after the channel's mapping changed. This file is the one owner of what such a row's data is:
// the export builds a mapped row with mappedObjectText too when nothing checks or rewrites it, and
// from the same values otherwise (src/exports/export-rows.ts), so both are the same jsonb.

/** How a channel stage's referring rows are made from their import rows: null, as they are; otherwise mapped. */
export interface Referral {
  mapping: ColumnMapping[] | null
}

// jsonb_build_object takes at most 100 arguments: wider objects are built in slices and joined.
const PAIRS_PER_CALL = 50

/** SQL text: the jsonb object of `mapping` over the row data `data` (an expression). */
export function mappedObjectText(data: string, mapping: ColumnMapping[]): string {
  if (mapping.length === 0) return `'{}'::jsonb`
  const pairs = mapping.map((m) => {
    const value = 'source' in m ? `coalesce(${data} ->> ${pg.escapeLiteral(m.source)}, '')` : `${pg.escapeLiteral(m.value)}::text`
    return `${pg.escapeLiteral(m.column)}::text, ${value}`
  })
  const slices: string[] = []
  for (let i = 0; i < pairs.length; i += PAIRS_PER_CALL) slices.push(`jsonb_build_object(${pairs.slice(i, i + PAIRS_PER_CALL).join(', ')})`)
  return slices.join(' || ')
}

/** SQL text: the data an import row's data `data` (an expression, NULL for no row) stands for in a stage referring by `referral`. */
export function referredDataText(data: string, referral: Referral): string {
  if (referral.mapping === null) return data
  return `CASE WHEN ${data} IS NOT NULL THEN ${mappedObjectText(data, referral.mapping)} END`
}

/**
 * SQL text: the data of the channel stage row aliased `row`, whose import stage row of the same id
 * is aliased `importRow` (joined where row.data IS NULL): its own, or the import row's as referred.
 */
export function stageRowDataText(row: string, importRow: string, referral: Referral | undefined): string {
  if (referral === undefined) return `${row}.data`
  return `coalesce(${row}.data, ${referredDataText(`${importRow}.data`, referral)})`
}

/**
 * SQL text: the value of `column` in the data of the channel stage row whose own data is the
 * expression `own` and whose import row's data is `imported` (NULL for no row), as `->>` reads it
 * from the data stageRowDataText makes: a mapped row's value read straight from its import row,
 * without building its object (a file of 1,000,000 referring rows reads 15 columns of each).
 */
export function referredValueText(own: string, imported: string, referral: Referral | undefined, column: string): string {
  const key = pg.escapeLiteral(column)
  if (referral === undefined) return `${own} ->> ${key}`
  if (referral.mapping === null) return `coalesce(${own}, ${imported}) ->> ${key}`
  const m = referral.mapping.findLast((entry) => entry.column === column)
  const mapped = m === undefined ? 'NULL' : 'source' in m ? `coalesce(${imported} ->> ${pg.escapeLiteral(m.source)}, '')` : pg.escapeLiteral(m.value)
  return `CASE WHEN ${own} IS NOT NULL THEN ${own} ->> ${key} WHEN ${imported} IS NOT NULL THEN ${mapped} END`
}

/** The referral a channel stage was saved with (site_stage.refers_to_import, refers_mapping). */
export function referralOf(stage: { refers_to_import: boolean; refers_mapping: ColumnMapping[] | null }): Referral | undefined {
  return stage.refers_to_import ? { mapping: stage.refers_mapping } : undefined
}
