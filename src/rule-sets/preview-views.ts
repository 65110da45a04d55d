import type { RulePipeline } from '../rules/rule-pipeline.js'
import type { Severity } from '../templates/template-types.js'
import type { CompiledChecks } from '../templates/template-checks.js'

// What a preview answers per product and per rule, as the API and the console show it.

/** What one rule did to one product. */
export interface PreviewStep {
  rule_id: string
  /** Its condition held (its `then` actions ran; otherwise its `else` actions). */
  matched: boolean
  /** The attribute it writes, and its value before and after the rule; null for a rule that only excludes. */
  attribute: string | null
  before: string | null
  after: string | null
  /** This rule excluded the product. */
  excluded: boolean
}

/** A template's checks of one row: the codes it fails and the values written another way, and whether the feed has it. */
export interface PreviewChecks {
  in_feed: boolean
  issues: { code: string; severity: Severity; attribute: string }[]
  notes: { code: string; attribute: string }[]
}

export interface PreviewProduct {
  id: string
  before: Record<string, string>
  /** Null: the rules exclude the product. */
  after: Record<string, string> | null
  excluded: boolean
  steps: PreviewStep[]
  /** A channel's: its template's checks before and after the rules, and the feed line the export writes (null: left out or excluded). */
  checks?: { before: PreviewChecks; after: PreviewChecks | null }
  line?: string | null
}

/** How many products of the whole stage a rule matches (those an earlier rule excluded do not count). */
export interface RuleMatches {
  rule_id: string
  matched: number
}

/** Each enabled rule's step on a row that carries the pipeline's step columns (m<k>, b<k>, a<k>). */
export function stepsOf(pipeline: RulePipeline, row: Record<string, unknown>): PreviewStep[] {
  const value = (column: string) => (column === `''` ? null : ((row[column] as string | null | undefined) ?? null))
  let gone = false
  return pipeline.steps.map((step) => {
    const matched = row[step.matched] === true
    // The actions that ran: then where the rule matched, else elsewhere; none once a rule excluded the product.
    const excluded = !gone && (matched ? step.rule.then : step.rule.else).some((action) => action.action === 'exclude')
    gone ||= excluded
    return { rule_id: step.rule.id, matched, attribute: step.rule.attribute, before: value(step.before), after: value(step.after), excluded }
  })
}

/** The codes of a row's issue and note bits. */
export function checksOf(checks: CompiledChecks | undefined, row: { issues: string | null; notes: string | null }, inFeed: boolean): PreviewChecks {
  const words = { issues: BigInt(row.issues ?? 0), notes: BigInt(row.notes ?? 0) }
  const found = (checks?.codes ?? []).filter((code) => (words[code.word] & (1n << BigInt(code.bit))) !== 0n)
  return {
    in_feed: inFeed,
    issues: found.filter((code) => code.word === 'issues').map((code) => ({ code: code.code, severity: code.severity, attribute: code.attribute })),
    notes: found.filter((code) => code.word === 'notes').map((code) => ({ code: code.code, attribute: code.attribute })),
  }
}
