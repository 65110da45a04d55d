import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import { channelStage, inStage, sameImportRow } from '../db/stage-keys.js'
import { stageRowDataText } from '../db/referred-data.js'
import { attributeColumns } from '../templates/template-checks.js'
import { MAX_QUOTED_VALUE, type CheckCode } from '../templates/template-codes.js'
import type { ChannelChecks } from './channel-diagnostics.js'

// The distinct values a check failed on in a channel's last export: what the console's
// "Fix with a rule" offers to map. Bounded: the first rows that fail the check (in product id
// order), and of their values at most `limit`, each as the diagnostics quote it.

/** Rows read at most per code: the values come from the first of the failing rows. */
const ROWS_READ = 2000

/** For each of `codes` (of `checks`' template), its distinct non-empty failing values, in order, at most `limit`. */
export async function failingValues(db: DbHandle, checks: ChannelChecks, codes: CheckCode[], limit = 50): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {}
  if (checks.totals === undefined) return found
  const columnOf = attributeColumns(checks.columns)
  for (const code of codes) {
    const column = columnOf.get(code.attribute)
    if (column === undefined || (checks.totals.codes[code.code] ?? 0) === 0) continue
    const word = sql.ref(`o.${code.word}`)
    const { rows } = await sql<{ value: string }>`SELECT value FROM (
        SELECT left(${sql.raw(stageRowDataText('o', 'i', checks.referral))} ->> ${column}, ${MAX_QUOTED_VALUE}) AS value, o.product_id
        FROM stage_product o LEFT JOIN stage_product i ON o.data IS NULL AND ${sameImportRow('i', 'o', checks.siteId)}
        WHERE ${inStage('o', checks.siteId, channelStage(checks.channelId))} AND ${word} & (1::bigint << ${code.bit}) <> 0
        ORDER BY o.product_id LIMIT ${ROWS_READ}) AS r
      WHERE coalesce(value, '') <> '' GROUP BY value ORDER BY min(product_id) LIMIT ${limit}`.execute(db)
    found[code.code] = rows.map((row) => row.value)
  }
  return found
}
