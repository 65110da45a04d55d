import type { CheckCode } from '../templates/template-codes.js'
import { attributeColumns } from '../templates/template-checks.js'
import { MAX_QUOTED_VALUE } from '../templates/template-codes.js'
import { ruleEditorPath } from './rule-links.js'

// "Fix with a rule" on a channel's diagnostics: a link to the channel's rule editor with
// a rule prefilled for a failing check, through the editor's query (rule-form.ts names the fields).
// A value not one of the template's becomes a `map` of the failing values (each to the closest
// allowed value, or '' for the person to fill); a value too long a `truncate` to the template's
// most; a missing one a `default_if_empty`. Nothing else gets a link: a note (info) tells what the
// template did, and a bare `set` with no value and no condition, saved as offered, emptied the
// attribute of every product (a differential run saved one that blanked every price).

/** The most characters of map entries a link carries: a URL stays far below a request line's limit. */
const ENTRIES_CHARS = 6000

/** The values a code's check allows, when it is one of a list (with the other spellings the template takes). */
function allowedOf(code: CheckCode): { values: readonly string[]; aliases?: Readonly<Record<string, string>> } | undefined {
  const rule = code.check.kind === 'rule' || code.check.kind === 'rewrite' ? code.check.rule : undefined
  return rule?.kind === 'one_of' ? rule : undefined
}

/** Whether a fix of `code` maps values (so the link needs the failing values). */
export function fixMapsValues(code: CheckCode): boolean {
  return allowedOf(code) !== undefined
}

const fold = (text: string) =>
  text
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ')
    .trim()

function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = row
  }
  return previous[b.length] ?? 0
}

/** The allowed value `value` most likely means: the same in another spelling, or one a typo or two away; '' when none is close. */
export function closestAllowed(value: string, allowed: { values: readonly string[]; aliases?: Readonly<Record<string, string>> }): string {
  const folded = fold(value)
  const same = allowed.values.find((candidate) => fold(candidate) === folded)
  if (same !== undefined) return same
  const alias = Object.entries(allowed.aliases ?? {}).find(([spelling]) => fold(spelling) === folded)
  if (alias) return alias[1]
  if (folded.length > 60) return ''
  let best = ''
  let least = Infinity
  for (const candidate of allowed.values) {
    const d = distance(folded, fold(candidate))
    if (d < least) [best, least] = [candidate, d]
  }
  return least <= Math.max(1, Math.floor(fold(best).length / 4)) ? best : ''
}

/** `from => to` lines of the failing values, as many as fit the link. */
function entriesText(values: string[], allowed: NonNullable<ReturnType<typeof allowedOf>>): string {
  const lines: string[] = []
  let length = 0
  for (const value of values) {
    // A value as long as the diagnostics quote may have been cut: it would map nothing.
    if (value.length >= MAX_QUOTED_VALUE || value.includes('=>') || /[\r\n]/.test(value) || value.trim() !== value) continue
    const line = `${value} => ${closestAllowed(value, allowed)}`
    length += encodeURIComponent(line).length + 3
    if (length > ENTRIES_CHARS) break
    lines.push(line)
  }
  return lines.join('\n')
}

/**
 * The link to the channel's rule editor prefilled to fix `code`; `values`: its failing values (for a
 * map). Undefined for a code that gets no link (see above).
 */
export function fixRuleHref(checks: { siteId: string; channelId: string; columns: string[] }, code: CheckCode, values: string[] = []): string | undefined {
  if (code.severity === 'info') return undefined
  const attribute = attributeColumns(checks.columns).get(code.attribute) ?? code.attribute
  const params = new URLSearchParams({ fix: code.code, attribute, description: `Fix ${code.code}` })
  const allowed = allowedOf(code)
  const rule = code.check.kind === 'rule' ? code.check.rule : undefined
  if (allowed) {
    params.set('then0_action', 'map')
    params.set('then0_entries', entriesText(values, allowed))
  } else if (rule?.kind === 'max_length') {
    params.set('then0_action', 'truncate')
    params.set('then0_max', String(rule.max))
  } else if (code.check.kind === 'missing') {
    params.set('then0_action', 'default_if_empty')
  } else {
    return undefined
  }
  return ruleEditorPath(checks.siteId, checks.channelId, undefined, params)
}
