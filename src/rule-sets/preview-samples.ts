import { sql, type RawBuilder } from 'kysely'
import { filterToSql, parseFilter } from '../catalog/filter.js'
import type { DbHandle } from '../db/database.js'
import { IMPORT_STAGE, inStage } from '../db/stage-keys.js'
import type { PreviewRequest } from './preview-input.js'

// Which products a preview shows: the ids asked, or the first products in id order that the
// filter keeps (and, asked, that the rules change or exclude). Those are found a range of the
// import stage at a time, each range four times the one before: the first range of an ordinary
// preview is its only one, and one whose products are rare reads the stage once at most.

const FIRST_RANGE = 1000

/**
 * SQL: the ids of the products of the import stage rows that `range` (a condition over them)
 * selects which the preview keeps, in id order, at most `limit`.
 */
export type KeptIds = (range: RawBuilder<unknown>, limit: number) => RawBuilder<{ product_id: string }>

export async function sampleIds(handle: DbHandle, siteId: string, request: PreviewRequest, kept: KeptIds): Promise<string[]> {
  if (request.ids) return request.ids
  const found: string[] = []
  let size = FIRST_RANGE
  for (let after: string | null = null; found.length < request.limit; size *= 4) {
    const { rows }: { rows: { last: string | null }[] } = await sql<{ last: string | null }>`SELECT max(product_id) AS last FROM (
        SELECT product_id FROM stage_product
        WHERE ${inStage('stage_product', siteId, IMPORT_STAGE)} AND ${after === null ? sql`true` : sql`product_id > ${after}`}
        ORDER BY product_id LIMIT ${size}) AS r`.execute(handle)
    const last: string | null = rows[0]?.last ?? null
    if (last === null) break
    const range = after === null ? sql`product_id <= ${last}` : sql`product_id > ${after} AND product_id <= ${last}`
    const { rows: ids } = await kept(range, request.limit - found.length).execute(handle)
    found.push(...ids.map((row) => row.product_id))
    after = last
  }
  return found
}

/** SQL: the preview's filter over the data of the row aliased `alias` (true without one); its columns are the stage's it reads. */
export function sampleFilter(request: PreviewRequest, columns: string[], alias: string): RawBuilder<unknown> {
  if (request.filter.trim() === '') return sql`true`
  return filterToSql(parseFilter(request.filter, columns), (column) => sql<string>`coalesce(${sql.ref(`${alias}.data`)} ->> ${column}, '')`)
}
