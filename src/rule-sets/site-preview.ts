import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Site } from '../db/schema.js'
import { importStageOf } from '../exports/export-store.js'
import { importRows, intermediateColumns, intermediatePipeline } from '../rules/intermediate-stage.js'
import { writtenDataSql, type RulePipeline } from '../rules/rule-pipeline.js'
import type { RuleSpec } from '../rules/rule-types.js'
import type { PreviewRequest } from './preview-input.js'
import { sampleFilter, sampleIds } from './preview-samples.js'
import { stepsOf, type PreviewProduct, type RuleMatches } from './preview-views.js'
import { quoter } from '../feeds/sql-quoter.js'

// A preview of a site's rules: the import stage's products through them, as the intermediate stage
// every channel reads would hold them, with each rule's step, and over the whole stage the counts.

export interface SitePreview {
  columns: string[]
  products: PreviewProduct[]
  summary: SiteSummary | null
}

export interface SiteSummary {
  /** Products of the import stage. */
  products: number
  changed: number
  excluded: number
  rules: RuleMatches[]
}

/** The preview of `rules` (drafts or the saved ones) on the site's products, read on `handle` (a read-only snapshot). */
export async function previewSite(handle: DbHandle, site: Site, rules: RuleSpec[], request: PreviewRequest): Promise<SitePreview> {
  const importColumns = (await importStageOf(handle, site.id))?.columns ?? []
  const filter = sampleFilter(request, importColumns, 'p')
  const enabled = rules.filter((rule) => rule.enabled)
  const ids = await sampleIds(handle, site.id, request, (range, limit) => {
    const pipeline = intermediatePipeline(enabled, importRows(site.id, range))
    const changed = request.changedOnly ? sql`(p.rewritten OR p.excluded)` : sql`true`
    return sql<{ product_id: string }>`SELECT p.product_id FROM (${pipeline.rows}) AS p WHERE ${filter} AND ${changed} ORDER BY p.product_id LIMIT ${limit}`
  })
  const products = await sampleProducts(handle, site.id, enabled, ids)
  return { columns: intermediateColumns(importColumns, enabled), products, summary: request.summary ? await siteSummary(handle, site.id, enabled) : null }
}

async function sampleProducts(handle: DbHandle, siteId: string, rules: RuleSpec[], ids: string[]): Promise<PreviewProduct[]> {
  if (ids.length === 0) return []
  const pipeline = intermediatePipeline(rules, importRows(siteId, sql`product_id = ANY(${ids}::text[])`), true)
  const steps = stepColumns(pipeline)
  const { rows } = await sql<
    Record<string, unknown> & { product_id: string; before: Record<string, string>; after: Record<string, string>; excluded: boolean }
  >`
    SELECT p.product_id, p.data AS before, ${sql.raw(writtenDataSql(quoter, pipeline, 'p'))} AS after, p.excluded${sql.raw(steps)}
    FROM (${pipeline.rows}) AS p`.execute(handle)
  const byId = new Map(rows.map((row) => [row.product_id, row]))
  return ids.flatMap((id) => {
    const row = byId.get(id)
    if (!row) return []
    return [{ id, before: row.before, after: row.excluded ? null : row.after, excluded: row.excluded, steps: stepsOf(pipeline, row) }]
  })
}

/** The pipeline's step columns as a SELECT list's continuation. */
function stepColumns(pipeline: RulePipeline): string {
  return pipeline.steps.map((step) => [step.matched, step.before, step.after].map((c) => (c === `''` ? '' : `, p.${c}`)).join('')).join('')
}

/** Over the whole import stage: products, how many the rules change and exclude, and how many each rule matches. */
async function siteSummary(handle: DbHandle, siteId: string, rules: RuleSpec[]): Promise<SiteSummary> {
  const pipeline = intermediatePipeline(rules, importRows(siteId))
  const matches = pipeline.steps.map((step, k) => `, count(*) FILTER (WHERE p.${step.matched}) AS n${k}`).join('')
  const { rows } = await sql<Record<string, string>>`SELECT count(*) AS products, count(*) FILTER (WHERE p.excluded) AS excluded,
      count(*) FILTER (WHERE p.rewritten AND NOT p.excluded) AS changed${sql.raw(matches)}
    FROM (${pipeline.rows}) AS p`.execute(handle)
  const row = rows[0] ?? {}
  return {
    products: Number(row.products ?? 0),
    changed: Number(row.changed ?? 0),
    excluded: Number(row.excluded ?? 0),
    rules: pipeline.steps.map((step, k) => ({ rule_id: step.rule.id, matched: Number(row[`n${k}`] ?? 0) })),
  }
}
