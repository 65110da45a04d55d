import { sql } from 'kysely'
import type { Db, DbHandle } from '../db/database.js'
import type { Channel, CheckTotals, Site } from '../db/schema.js'
import { readinessOf, totalsOf } from '../exports/check-totals.js'
import { planExport, type ExportLimits, type ExportPlan } from '../exports/export-plan.js'
import type { PreviewTrack } from '../exports/export-rows.js'
import type { RuleSpec } from '../rules/rule-types.js'
import type { PreviewRequest } from './preview-input.js'
import { sampleFilter, sampleIds } from './preview-samples.js'
import { checksOf, stepsOf, type PreviewProduct, type RuleMatches } from './preview-views.js'

// A preview of a channel's rules: its products as its next export makes them (the intermediate
// stage through its filter and mapping, then the rules), each with the template's checks before and
// after the rules and the feed line the export writes, byte for byte: the rows and the line are the
// export's own SQL (planExport), with the drafts standing in for the saved rules.

export interface ChannelPreview {
  columns: string[]
  products: PreviewProduct[]
  summary: ChannelSummary | null
}

/** Over every product of the channel: what the rules change and exclude, and the checks' counts they lead to. */
export interface ChannelSummary {
  /** Products through the channel's filter, before its rules. */
  products: number
  changed: number
  excluded: number
  rules: RuleMatches[]
  checked: number
  exported: number
  left_out: number
  /** The share of checked products without errors the channel would reach; null when nothing is checked. */
  readiness: number | null
  /** The same with the saved rules, when drafts stand in for them. */
  saved: { checked: number; exported: number; left_out: number; readiness: number | null } | null
}

export interface ChannelPreviewRequest {
  site: Site
  channel: Channel
  /** The channel's rules the preview runs (the drafts, or the saved ones). */
  rules: RuleSpec[]
  request: PreviewRequest
  limits: ExportLimits
}

/** Plans the channel's export with the previewed rules (`track` what they do) and with none. */
async function plansOf(db: Db, { site, channel, rules, limits }: ChannelPreviewRequest) {
  const plan = (drafts: RuleSpec[] | undefined, track?: PreviewTrack) =>
    planExport(db, { site, channel, pid: 'preview', now: new Date(), limits, ...(drafts ? { drafts: { channel: drafts } } : {}), ...(track ? { track } : {}) })
  return { steps: await plan(rules, 'steps'), matches: await plan(rules, 'matches'), without: await plan([]), saved: () => plan(undefined) }
}

export async function previewChannel(db: Db, handle: DbHandle, input: ChannelPreviewRequest): Promise<ChannelPreview> {
  const plans = await plansOf(db, input)
  const { request, site } = input
  const ruled = input.rules.some((rule) => rule.enabled)
  const filter = sampleFilter(request, plans.without.columns, 'b')
  const ids =
    request.changedOnly && !ruled
      ? []
      : await sampleIds(handle, site.id, request, (range, limit) => {
          const changed = request.changedOnly
            ? sql`JOIN (${plans.matches.rowsWhere(range)}) AS a ON a.product_id = b.product_id AND (a.rules_rewritten OR a.excluded)`
            : sql``
          return sql<{
            product_id: string
          }>`SELECT b.product_id FROM (${plans.without.rowsWhere(range)}) AS b ${changed} WHERE ${filter} ORDER BY b.product_id LIMIT ${limit}`
        })
  const products = await sampleProducts(handle, plans, ids, ruled)
  const summary = request.summary ? await channelSummary(handle, plans.matches, ruled, input.request.drafts ? await plans.saved() : undefined) : null
  return { columns: plans.steps.columns, products, summary }
}

type Row = Record<string, unknown> & { product_id: string; data: Record<string, string>; issues: string | null; notes: string | null; left_out: boolean }

async function sampleProducts(handle: DbHandle, plans: { steps: ExportPlan; without: ExportPlan }, ids: string[], ruled: boolean): Promise<PreviewProduct[]> {
  if (ids.length === 0) return []
  const only = sql`product_id = ANY(${ids}::text[])`
  const { steps: plan, without } = plans
  const excluded = ruled ? 'r.excluded' : 'false'
  const { rows: after } = await sql<Row & { line: string | null; excluded: boolean }>`
    SELECT r.*, ${plan.leftOut('r.issues')} AS left_out, ${sql.raw(excluded)} AS excluded,
      CASE WHEN NOT ${plan.leftOut('r.issues')} AND NOT ${sql.raw(excluded)} THEN ${plan.line({ data: 'r.data', row: 'r' })} END AS line
    FROM (${plan.rowsWhere(only)}) AS r`.execute(handle)
  const { rows: before } = await sql<Row>`SELECT r.*, ${without.leftOut('r.issues')} AS left_out FROM (${without.rowsWhere(only)}) AS r`.execute(handle)
  const afterOf = new Map(after.map((row) => [row.product_id, row]))
  const beforeOf = new Map(before.map((row) => [row.product_id, row]))
  const pipeline = plan.rulePipeline
  return ids.flatMap((id): PreviewProduct[] => {
    const was = beforeOf.get(id)
    const now = afterOf.get(id)
    if (!was || !now) return []
    return [
      {
        id,
        before: was.data,
        after: now.excluded ? null : now.data,
        excluded: now.excluded,
        steps: pipeline ? stepsOf(pipeline, now) : [],
        checks: { before: checksOf(without.checks, was, !was.left_out), after: now.excluded ? null : checksOf(plan.checks, now, !now.left_out) },
        line: now.line,
      },
    ]
  })
}

interface Group {
  issues: string | null
  notes: string | null
  left_out: boolean
  excluded: boolean
  rewritten: boolean
  n: string
  [match: `n${number}`]: string
}

/** One pass over every row the channel's rules see, grouped by what decides the counts. */
async function channelSummary(handle: DbHandle, plan: ExportPlan, ruled: boolean, saved: ExportPlan | undefined): Promise<ChannelSummary> {
  const steps = ruled ? (plan.rulePipeline?.steps ?? []) : []
  const matches = steps.map((step, k) => `, count(*) FILTER (WHERE r.${step.matched}) AS n${k}`).join('')
  const flags = ruled ? 'r.excluded AS excluded, r.rules_rewritten AS rewritten' : 'false AS excluded, false AS rewritten'
  const { rows } = await sql<Group>`SELECT r.issues, r.notes, ${plan.leftOut('r.issues')} AS left_out, ${sql.raw(flags)}, count(*) AS n${sql.raw(matches)}
    FROM (${plan.rows}) AS r GROUP BY 1, 2, 3, 4, 5`.execute(handle)
  const sum = (of: (group: Group) => number) => rows.reduce((total, group) => total + of(group), 0)
  const kept = rows.filter((group) => !group.excluded)
  const totals = checkTotals(plan, kept)
  return {
    products: sum((g) => Number(g.n)),
    changed: sum((g) => (g.rewritten && !g.excluded ? Number(g.n) : 0)),
    excluded: sum((g) => (g.excluded ? Number(g.n) : 0)),
    rules: steps.map((step, k) => ({ rule_id: step.rule.id, matched: sum((g) => Number(g[`n${k}`] ?? 0)) })),
    ...figures(totals),
    saved: saved
      ? figures(
          checkTotals(
            saved,
            (await groupsOf(handle, saved)).map((g) => ({ ...g, excluded: false, rewritten: false })),
          ),
        )
      : null,
  }
}

async function groupsOf(handle: DbHandle, plan: ExportPlan): Promise<Omit<Group, 'excluded' | 'rewritten'>[]> {
  const { rows } = await sql<Omit<Group, 'excluded' | 'rewritten'>>`SELECT r.issues, r.notes, ${plan.leftOut('r.issues')} AS left_out, count(*) AS n
    FROM (${plan.rows}) AS r GROUP BY 1, 2, 3`.execute(handle)
  return rows
}

function checkTotals(plan: ExportPlan, groups: Pick<Group, 'issues' | 'notes' | 'left_out' | 'n'>[]): CheckTotals {
  return totalsOf(
    plan.checks,
    groups.map((g) => ({ issues: g.issues, notes: g.notes, inStage: true, inFeed: !g.left_out, rows: Number(g.n) })),
  )
}

function figures(totals: CheckTotals) {
  return { checked: totals.checked, exported: totals.exported, left_out: totals.leftOut, readiness: readinessOf(totals) }
}
