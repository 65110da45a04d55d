import { feedFrame, lineSql, type FeedFrame } from '../feeds/feed-sql.js'
import type { ExportPlan } from './export-plan.js'
import { attributeColumns } from '../templates/template-checks.js'
import { MAX_QUOTED_VALUE } from '../templates/template-codes.js'
import { quoter } from '../feeds/sql-quoter.js'

// The skipped file (ChannelFilename type `skipped`) lists the products a channel's checks left out
// of its feed, each with the first error it fails (in the template's order), the value that failed
// it (cut to 200 characters, as diagnostics quote it) and what to do about it, in the channel's
// format. It is read from the stage's rows without a line that fail a check, through the index of
// those rows alone (migration 0025): its cost is the left-out rows', not the catalog's.

export const SKIPPED_COLUMNS = ['id', 'attribute', 'code', 'value', 'message', 'hint']

export function skippedFrame(plan: ExportPlan): FeedFrame {
  const { site, channel } = plan
  return feedFrame(SKIPPED_COLUMNS, channel.format, {
    title: `${site.title}: ${channel.name}, products left out`,
    link: '',
    description: `Products channel ${channel.id} of site ${site.id} left out of its feed, with their first error`,
  })
}

/** A complete SELECT of (product_id, line) of the skipped file, for COPY. */
export function skippedLinesSql(plan: ExportPlan): string {
  const errors = (plan.checks?.codes ?? []).filter((code) => code.severity === 'error')
  // A stage of lines rendered on read leaves no row out.
  if (errors.length === 0 || plan.linesOnRead) return `SELECT NULL::text AS product_id, NULL::text AS line WHERE false`
  const first = (field: 'attribute' | 'code' | 'message' | 'hint' | 'value') => {
    const cases = errors.map((code) => {
      const column = columnOf.get(code.attribute)
      const value =
        field !== 'value'
          ? quoter.escapeLiteral(code[field])
          : column === undefined
            ? `''`
            : `left(coalesce(o.data ->> ${quoter.escapeLiteral(column)}, ''), ${MAX_QUOTED_VALUE})`
      return `WHEN o.issues & ${(1n << BigInt(code.bit)).toString()}::bigint <> 0 THEN ${value}`
    })
    return `CASE ${cases.join(' ')} END`
  }
  const columnOf = attributeColumns(plan.columns)
  const pairs = SKIPPED_COLUMNS.map(
    (column) => `'${column}', ${column === 'id' ? 'o.product_id' : first(column as 'attribute' | 'code' | 'message' | 'hint' | 'value')}`,
  )
  const data = `jsonb_build_object(${pairs.join(', ')})`
  const line = lineSql(quoter, SKIPPED_COLUMNS, plan.channel.format, 's.data')
  return `SELECT s.product_id, ${line} AS line
    FROM (SELECT o.product_id, ${data} AS data FROM ${plan.stageRows} AND o.line IS NULL AND o.issues <> 0) AS s`
}
