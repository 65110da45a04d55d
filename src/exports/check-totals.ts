import { sql } from 'kysely'
import type { CheckTotals } from '../db/schema.js'
import type { Tx } from '../db/transaction.js'
import type { CompiledChecks } from '../templates/template-checks.js'

export type { CheckTotals } from '../db/schema.js'

// The counts of a channel's checks follow the change like everything else an export keeps: a later
// export adds what its changed rows fail now and takes away what they failed before (export_rows
// holds both), so counting costs what the change costs; an export that checks every row again
// counts from nothing. Rows are counted per combination of issues (GROUP BY), of which a catalog
// has few, and the bits are added up here: one aggregate per code cost a second a million rows.

export const NO_CHECKS: CheckTotals = { checked: 0, exported: 0, leftOut: 0, withErrors: 0, withWarnings: 0, exportedWithWarnings: 0, codes: {} }

/** Rows that share their issues and notes and their place in the stage and the feed, now or before. */
export interface CountedGroup {
  issues: string | null
  notes: string | null
  inStage: boolean
  inFeed: boolean
  rows: number
}

/**
 * The totals after this export from export_rows: `previous` plus what its rows count now minus what
 * they counted before; from nothing when `previous` is undefined (every row was classified again).
 */
export async function countChecks(tx: Tx, checks: CompiledChecks, previous: CheckTotals | undefined): Promise<CheckTotals> {
  const { rows } = await sql<{
    issues: string | null
    old_issues: string | null
    notes: string | null
    old_notes: string | null
    is_row: boolean
    was_row: boolean
    in_feed: boolean
    was_in_feed: boolean
    n: string
  }>`
    SELECT issues, old_issues, notes, old_notes, kind <> 'deleted' AS is_row, kind <> 'new' AS was_row,
      coalesce(feed IN ('new', 'modified', 'unchanged'), false) AS in_feed, coalesce(feed IN ('modified', 'unchanged', 'deleted'), false) AS was_in_feed,
      count(*) AS n
    FROM export_rows GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`.execute(tx.db)
  const now = rows.map((row) => ({ issues: row.issues, notes: row.notes, inStage: row.is_row, inFeed: row.in_feed, rows: Number(row.n) }))
  if (previous === undefined) return totalsOf(checks, now)
  const before = rows.map((row) => ({ issues: row.old_issues, notes: row.old_notes, inStage: row.was_row, inFeed: row.was_in_feed, rows: Number(row.n) }))
  return combine(previous, totalsOf(checks, now), totalsOf(checks, before))
}

/** The totals of rows counted in groups. */
export function totalsOf(checks: CompiledChecks | undefined, groups: CountedGroup[]): CheckTotals {
  const totals: CheckTotals = { ...NO_CHECKS, codes: {} }
  const errors = checks?.errorMask ?? 0n
  const warnings = checks?.warningMask ?? 0n
  for (const group of groups) {
    if (!group.inStage) continue
    const issues = BigInt(group.issues ?? 0)
    const words = { issues, notes: BigInt(group.notes ?? 0) }
    totals.checked += group.rows
    if (group.inFeed) totals.exported += group.rows
    if ((issues & errors) !== 0n) totals.withErrors += group.rows
    if ((issues & warnings) !== 0n) totals.withWarnings += group.rows
    if (group.inFeed && (issues & (errors | warnings)) !== 0n) totals.exportedWithWarnings += group.rows
    for (const code of checks?.codes ?? []) {
      if ((words[code.word] & (1n << BigInt(code.bit))) !== 0n) totals.codes[code.code] = (totals.codes[code.code] ?? 0) + group.rows
    }
  }
  totals.leftOut = totals.checked - totals.exported
  return totals
}

function combine(previous: CheckTotals, now: CheckTotals, before: CheckTotals): CheckTotals {
  const codes: Record<string, number> = { ...previous.codes }
  for (const [code, count] of Object.entries(now.codes)) codes[code] = (codes[code] ?? 0) + count
  for (const [code, count] of Object.entries(before.codes)) codes[code] = (codes[code] ?? 0) - count
  for (const code of Object.keys(codes)) if (codes[code] === 0) delete codes[code]
  const sum = (key: Exclude<keyof CheckTotals, 'codes' | 'template'>) => previous[key] + now[key] - before[key]
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
