import { sql } from 'kysely'
import type { DbHandle } from '../db/database.js'
import type { Channel, CheckTotals } from '../db/schema.js'
import type { Severity } from '../templates/template-types.js'
import { BadRequestError } from '../errors.js'
import { GENERIC_TEMPLATE, templateNamed } from '../templates/template-catalog.js'
import { attributeColumns } from '../templates/template-checks.js'
import { checkCodes, MAX_QUOTED_VALUE, type CheckCode } from '../templates/template-codes.js'
import { getChannel } from './channels.js'
import { channelStage, inStage, sameImportRow } from '../db/stage-keys.js'
import { referralOf, stageRowDataText, type Referral } from '../db/referred-data.js'

// What a channel's last export found checking its products against the channel's template, read
// back: each failed check of each product (paged, filtered), and the counts. The checks are the
// bits the export kept on each channel stage row (stage_product.issues and .notes), the values the
// row's own data (or its import stage row's, which it refers to): nothing is copied, so the
// diagnostics of a catalog cost 16 bytes a product at most and are exact.

export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info']

export interface DiagnosticsQuery {
  limit: number
  offset: number
  severity?: string
  code?: string
  attribute?: string
  id?: string
}

export interface DiagnosticEntry {
  productId: string
  check: CheckCode
  /** The value the check read, cut to MAX_QUOTED_VALUE characters; '' when the attribute was empty. */
  value: string
}

export interface ChannelChecks {
  siteId: string
  channelId: string
  template: string
  validationMode: string
  readinessThreshold: number | null
  codes: CheckCode[]
  /** The last export's counts; none before the channel's first export. */
  totals: CheckTotals | undefined
  columns: string[]
  /** How the stage's clean rows refer to the import stage's rows for their data, when they do. */
  referral: Referral | undefined
  /** When the last export wrote the stage, and its run. */
  exportedAt: Date | null
  pid: string | null
}

/** The channel's template and the counts of its last export, for the caller's account only. */
export async function channelChecks(db: DbHandle, accountId: string, siteSegment: string, channelId: string): Promise<ChannelChecks> {
  const { channel } = await getChannel(db, accountId, siteSegment, channelId)
  return checksOfChannel(db, channel)
}

/** channelChecks of a channel its caller has already read for the account (a page listing channels). */
export async function checksOfChannel(db: DbHandle, channel: Channel): Promise<ChannelChecks> {
  const accountId = channel.account_id
  const stage = await db
    .selectFrom('site_stage')
    .select(['checks', 'columns', 'row_count', 'refers_to_import', 'refers_mapping'])
    .where('account_id', '=', accountId)
    .where(inStage('site_stage', channel.site_id, channelStage(channel.id)))
    .executeTakeFirst()
  const last = await db
    .selectFrom('channel_export')
    .select(['pid', 'export_time'])
    .where('account_id', '=', accountId)
    .where('channel_id', '=', channel.id)
    .where('process_status', '=', 'success')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst()
  // The bits are the codes of the template the last export checked with, until the next export.
  const template = templateNamed(stage?.checks?.template ?? channel.template) ?? GENERIC_TEMPLATE
  const rows = Number(stage?.row_count ?? 0)
  // A stage exported before templates existed checked nothing: every row was exported.
  const totals = stage
    ? (stage.checks ?? { checked: rows, exported: rows, leftOut: 0, withErrors: 0, withWarnings: 0, exportedWithWarnings: 0, codes: {} })
    : undefined
  return {
    siteId: channel.site_id,
    channelId: channel.id,
    template: template.name,
    validationMode: channel.validation_mode,
    readinessThreshold: channel.readiness_threshold === null ? null : Number(channel.readiness_threshold),
    codes: checkCodes(template),
    totals,
    columns: stage?.columns ?? [],
    referral: stage ? referralOf(stage) : undefined,
    exportedAt: last?.export_time ?? null,
    pid: last?.pid ?? null,
  }
}

/** The id filter's bound, as the platform interface's schema has it: a product id is at most 1,000 bytes. */
const MAX_ID_FILTER_CHARS = 1000

/** The codes a query's filters select, as a bit mask; a filter naming what the template has not is a 400. */
function selectedCodes(checks: ChannelChecks, query: DiagnosticsQuery): CheckCode[] {
  const { severity, code, attribute } = query
  // Postgres text holds no NUL: such an id names no product, and would fail the query.
  if (query.id?.includes('\u0000')) throw new BadRequestError('id: a product id has no NUL character')
  if (query.id !== undefined && query.id.length > MAX_ID_FILTER_CHARS) {
    throw new BadRequestError(`id: at most ${MAX_ID_FILTER_CHARS} characters; no product id is longer`)
  }
  if (severity !== undefined && !SEVERITIES.includes(severity as Severity)) throw new BadRequestError(`severity: must be one of ${SEVERITIES.join(', ')}`)
  if (code !== undefined && !checks.codes.some((c) => c.code === code)) {
    throw new BadRequestError(
      `code: the ${checks.template} template has no code ${JSON.stringify(code.slice(0, 100))}; ` +
        `its codes are listed at /platform/v2/export_templates/${checks.template}`,
    )
  }
  if (attribute !== undefined && !checks.codes.some((c) => c.attribute === attribute)) {
    throw new BadRequestError(`attribute: the ${checks.template} template checks no attribute ${JSON.stringify(attribute.slice(0, 100))}`)
  }
  return checks.codes.filter(
    (c) =>
      (severity === undefined || c.severity === severity) && (code === undefined || c.code === code) && (attribute === undefined || c.attribute === attribute),
  )
}

/**
 * One page of the failed checks of the channel's last export, in product id order and, per
 * product, in the template's order. `total` is exact: the counts the export kept, or, for one
 * product, its own checks.
 */
export async function channelDiagnostics(
  db: DbHandle,
  accountId: string,
  siteSegment: string,
  channelId: string,
  query: DiagnosticsQuery,
): Promise<ChannelDiagnostics> {
  const { channel } = await getChannel(db, accountId, siteSegment, channelId)
  return diagnosticsOfChannel(db, channel, query)
}

export interface ChannelDiagnostics {
  checks: ChannelChecks
  entries: DiagnosticEntry[]
  total: number
}

/** channelDiagnostics of a channel its caller has already read for the account. */
export async function diagnosticsOfChannel(db: DbHandle, channel: Channel, query: DiagnosticsQuery): Promise<ChannelDiagnostics> {
  const checks = await checksOfChannel(db, channel)
  const selected = selectedCodes(checks, query)
  if (selected.length === 0 || checks.totals === undefined) return { checks, entries: [], total: 0 }
  const masks = masksOf(selected)
  const columnOf = attributeColumns(checks.columns)
  const position = new Map(checks.codes.map((c, i) => [c, i]))
  const data = sql.raw(stageRowDataText('o', 'i', checks.referral))
  const valueCases = selected.map((c) => sql`WHEN ${position.get(c) ?? -1} THEN ${data} ->> ${columnOf.get(c.attribute) ?? ''}`)
  const byId = query.id === undefined ? sql`true` : sql`o.product_id = ${query.id}`
  // A row whose only bits are notes may refer to the import stage's row for its data (exported-data.ts).
  const rows = await sql<{ product_id: string; code: number; value: string | null }>`
    SELECT o.product_id, b.code, left(CASE b.code ${sql.join(valueCases, sql` `)} END, ${MAX_QUOTED_VALUE}) AS value
    FROM stage_product o
      LEFT JOIN stage_product i ON o.data IS NULL AND ${sameImportRow('i', 'o', checks.siteId)}
      CROSS JOIN LATERAL unnest(${selected.map((c) => position.get(c) ?? -1)}::int[], ${selected.map((c) => c.bit)}::int[],
        ${selected.map((c) => c.word === 'notes')}::boolean[]) AS b(code, bit, in_notes)
    WHERE ${inStage('o', checks.siteId, channelStage(checks.channelId))}
      AND (o.issues & ${masks.issues}::bigint <> 0 OR o.notes & ${masks.notes}::bigint <> 0)
      AND CASE WHEN b.in_notes THEN o.notes ELSE o.issues END & (1::bigint << b.bit) <> 0 AND ${byId}
    ORDER BY o.product_id, b.code
    LIMIT ${query.limit} OFFSET ${query.offset}`.execute(db)
  const entries = rows.rows.flatMap((row) => {
    const check = checks.codes[row.code]
    return check ? [{ productId: row.product_id, check, value: row.value ?? '' }] : []
  })
  const total =
    query.id === undefined ? selected.reduce((sum, c) => sum + (checks.totals?.codes[c.code] ?? 0), 0) : await countOfProduct(db, checks, query.id, masks)
  return { checks, entries, total }
}

/** The bits of `codes` in each word, as bigint texts. */
function masksOf(codes: CheckCode[]): { issues: string; notes: string } {
  const of = (word: string) =>
    codes
      .filter((c) => c.word === word)
      .reduce((bits, c) => bits | (1n << BigInt(c.bit)), 0n)
      .toString()
  return { issues: of('issues'), notes: of('notes') }
}

async function countOfProduct(db: DbHandle, checks: ChannelChecks, productId: string, masks: { issues: string; notes: string }): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT coalesce(bit_count((issues & ${masks.issues}::bigint)::bit(64)), 0)::int
      + coalesce(bit_count((notes & ${masks.notes}::bigint)::bit(64)), 0)::int AS n FROM stage_product
    WHERE ${inStage('stage_product', checks.siteId, channelStage(checks.channelId))} AND product_id = ${productId}`.execute(db)
  return Number(rows[0]?.n ?? 0)
}
