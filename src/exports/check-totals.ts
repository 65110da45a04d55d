import { sql } from 'kysely'
import type { CheckTotals } from '../db/schema.js'
import type { Tx } from '../db/transaction.js'
import type { CompiledChecks } from '../templates/template-checks.js'

export type { CheckTotals } from '../db/schema.js'

// The counts of a channel's checks follow the change like everything else an export keeps: a later
// export adds what its changed rows fail now and takes away what they failed before (export_rows
// holds both), so counting costs what the change costs; an export that checks every row again
// counts from nothing.

export const NO_CHECKS: CheckTotals = { checked: 0, exported: 0, leftOut: 0, withErrors: 0, withWarnings: 0, exportedWithWarnings: 0, codes: {} }

/** The rows of a count: where each row's issues (now and before) are, and whether it is (was) in the stage and feed. */
interface CountedRows {
  issues: string
  oldIssues: string
  isRow: string
  wasRow: string
  inFeed: string
  wasInFeed: string
}

const EXPORT_ROWS: CountedRows = {
  issues: 'issues',
  oldIssues: 'old_issues',
  isRow: "kind <> 'deleted'",
  wasRow: "kind <> 'new'",
  inFeed: "feed IN ('new', 'modified', 'unchanged')",
  wasInFeed: "feed IN ('modified', 'unchanged', 'deleted')",
}

/**
 * The totals after this export from export_rows: `previous` plus what its rows count now minus what
 * they counted before; from nothing when `previous` is undefined (every row was classified again).
 */
export async function countChecks(tx: Tx, checks: CompiledChecks | undefined, previous: CheckTotals | undefined): Promise<CheckTotals> {
  const sides =
    previous === undefined ? [countsOf(checks, EXPORT_ROWS, 'now')] : [countsOf(checks, EXPORT_ROWS, 'now'), countsOf(checks, EXPORT_ROWS, 'before')]
  const { rows } = await sql<Record<string, unknown>>`${sql.raw(`SELECT ${sides.join(', ')} FROM export_rows`)}`.execute(tx.db)
  const now = totalsOfRow(checks, rows[0] ?? {}, 'now_')
  return previous === undefined ? now : combine(previous, now, totalsOfRow(checks, rows[0] ?? {}, 'before_'))
}

/** The totals of a first export, whose rows the statement `stored` returned (issues, bytes: null when left out). */
export function firstExportCountsSql(checks: CompiledChecks | undefined): string {
  return countsOf(
    checks,
    { issues: 'issues', oldIssues: 'NULL::bigint', isRow: 'true', wasRow: 'false', inFeed: 'bytes IS NOT NULL', wasInFeed: 'false' },
    'now',
  )
}

/** The totals in a row of countsOf's columns, named with `prefix`. */
export function totalsOfRow(checks: CompiledChecks | undefined, row: Record<string, unknown>, prefix: string): CheckTotals {
  const n = (key: string) => Number(row[prefix + key] ?? 0)
  const codes: Record<string, number> = {}
  for (const code of checks?.codes ?? []) {
    const count = n(`c${code.bit}`)
    if (count !== 0) codes[code.code] = count
  }
  return {
    checked: n('checked'),
    exported: n('exported'),
    leftOut: n('checked') - n('exported'),
    withErrors: n('with_errors'),
    withWarnings: n('with_warnings'),
    exportedWithWarnings: n('exported_with_warnings'),
    codes,
  }
}

/** The aggregates counting `rows` as they are now or were before, as a SELECT list; columns named `<side>_…`. */
function countsOf(checks: CompiledChecks | undefined, rows: CountedRows, side: 'now' | 'before'): string {
  const [issues, isRow, inFeed] = side === 'now' ? [rows.issues, rows.isRow, rows.inFeed] : [rows.oldIssues, rows.wasRow, rows.wasInFeed]
  const errors = checks?.errorMask ?? 0n
  const problems = errors | (checks?.warningMask ?? 0n)
  const has = (mask: bigint) => `coalesce(${issues} & ${mask.toString()}::bigint, 0) <> 0`
  const list = [
    `count(*) FILTER (WHERE ${isRow}) AS ${side}_checked`,
    `count(*) FILTER (WHERE ${inFeed}) AS ${side}_exported`,
    `count(*) FILTER (WHERE ${isRow} AND ${has(errors)}) AS ${side}_with_errors`,
    `count(*) FILTER (WHERE ${isRow} AND ${has(checks?.warningMask ?? 0n)}) AS ${side}_with_warnings`,
    `count(*) FILTER (WHERE ${inFeed} AND ${has(problems)}) AS ${side}_exported_with_warnings`,
    ...(checks?.codes ?? []).map((code) => `count(*) FILTER (WHERE ${isRow} AND ${has(1n << BigInt(code.bit))}) AS ${side}_c${code.bit}`),
  ]
  return list.join(', ')
}

function combine(previous: CheckTotals, now: CheckTotals, before: CheckTotals): CheckTotals {
  const codes: Record<string, number> = { ...previous.codes }
  for (const [code, count] of Object.entries(now.codes)) codes[code] = (codes[code] ?? 0) + count
  for (const [code, count] of Object.entries(before.codes)) codes[code] = (codes[code] ?? 0) - count
  for (const code of Object.keys(codes)) if (codes[code] === 0) delete codes[code]
  const sum = (key: Exclude<keyof CheckTotals, 'codes'>) => previous[key] + now[key] - before[key]
  return {
    checked: sum('checked'),
    exported: sum('exported'),
    leftOut: sum('leftOut'),
    withErrors: sum('withErrors'),
    withWarnings: sum('withWarnings'),
    exportedWithWarnings: sum('exportedWithWarnings'),
    codes,
  }
}

/** The share of checked products without errors, or null when the channel has none. */
export function readinessOf(totals: CheckTotals): number | null {
  return totals.checked === 0 ? null : (totals.checked - totals.withErrors) / totals.checked
}
