import { sql, type RawBuilder } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Site } from '../db/schema.js'
import { IMPORT_STAGE, inStage } from '../db/stage-keys.js'
import { rulePipeline, writtenDataSql, type RulePipeline } from './rule-pipeline.js'
import { rulesOfScope } from './rule-store.js'
import type { RuleSpec } from './rule-types.js'
import { quoter } from '../feeds/sql-quoter.js'

// The intermediate stage: the import stage through the site's rules. It is not stored:
// every reader reads the import stage's rows through the rules, as SQL (rule-pipeline.ts), so it
// costs no byte on disk and is never stale, and what a product read of it shows is what an export
// of its rows works with. A site without enabled rules reads the import stage as it is.

/** The site's rules an intermediate stage is read through: its enabled ones, in order. */
export async function siteRules(db: DbHandle, site: Pick<Site, 'id' | 'account_id'>): Promise<RuleSpec[]> {
  return (await rulesOfScope(db, site.account_id, { siteId: site.id, channelId: null })).filter((rule) => rule.enabled)
}

/**
 * The import stage's rows of the site that `also` selects (over the row aliased `stage_product`);
 * `ordered`, in product id order, which every level of a pipeline keeps (so that a page's LIMIT
 * stops reading once it has its rows).
 */
export function importRows(siteId: string, also: RawBuilder<unknown> = sql`true`, { ordered = false } = {}): RawBuilder<unknown> {
  const order = ordered ? sql` ORDER BY product_id` : sql``
  return sql`SELECT product_id, data FROM stage_product WHERE ${inStage('stage_product', siteId, IMPORT_STAGE)} AND ${also}${order}`
}

/** The import stage's rows through `rules`: the pipeline, its rows the carried product_id and data. */
export function intermediatePipeline(rules: RuleSpec[], rows: RawBuilder<unknown>, track = false): RulePipeline {
  return rulePipeline(
    quoter,
    rules,
    { rows, carry: ['product_id', 'data'], read: (attribute) => `coalesce(s.data ->> ${quoter.escapeLiteral(attribute)}, '')` },
    track,
  )
}

/**
 * The intermediate stage's rows that `also` selects (product_id, data, changed): the import stage's
 * through `rules`, without the ones they exclude, each with its data as the rules leave it (the
 * import row's own when they changed nothing, so that such a row reads as it is stored).
 */
export function intermediateRows(
  siteId: string,
  rules: RuleSpec[],
  also: RawBuilder<unknown> = sql`true`,
  order: { ordered?: boolean } = {},
): RawBuilder<unknown> {
  const rows = importRows(siteId, also, order)
  if (rules.length === 0) return sql`SELECT product_id, data, false AS changed FROM (${rows}) AS i`
  const pipeline = intermediatePipeline(rules, rows)
  const data = sql.raw(writtenDataSql(quoter, pipeline, 'p'))
  return sql`SELECT p.product_id, ${data} AS data, p.rewritten AS changed FROM (${pipeline.rows}) AS p WHERE NOT p.excluded`
}

/** Whether any of the rules may exclude a product. */
export function excludes(rules: RuleSpec[]): boolean {
  return rules.some((rule) => rule.then.concat(rule.else).some((action) => action.action === 'exclude'))
}

/** The intermediate stage's row count: the import stage's rows the rules do not exclude (each row read through them once). */
export async function intermediateCount(db: DbHandle, siteId: string, rules: RuleSpec[]): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM (${intermediateRows(siteId, rules)}) AS r`.execute(db)
  return Number(rows[0]?.n ?? 0)
}

/** The intermediate stage's columns: the import stage's, then those the rules create, in the order they are first written. */
export function intermediateColumns(importColumns: string[], rules: RuleSpec[]): string[] {
  const created = rules.flatMap((rule) => (rule.attribute && !importColumns.includes(rule.attribute) ? [rule.attribute] : []))
  return [...importColumns, ...new Set(created)]
}
