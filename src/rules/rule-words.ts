import { counted } from '../input/text-input.js'
import type { Action, Condition, Group, RuleSpec } from './rule-types.js'

// A rule written out in words, as the console lists it and the API's `summary` gives it:
// `If availability is one of "in stock", "instock": set availability to "in_stock"`.

const quote = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}…` : text)

/** Each operator in words: `brand is "Acme"`. */
export const OPERATOR_WORDS: Record<Condition['operator'], string> = {
  equals: 'is',
  not_equals: 'is not',
  contains: 'contains',
  not_contains: 'does not contain',
  starts_with: 'starts with',
  ends_with: 'ends with',
  in: 'is one of',
  not_in: 'is none of',
  is_empty: 'is empty',
  is_not_empty: 'is not empty',
  greater_than: 'is more than',
  greater_or_equal: 'is at least',
  less_than: 'is less than',
  less_or_equal: 'is at most',
  matches: 'matches the pattern',
  length_greater_than: 'is longer than',
}

export function conditionWords(condition: Condition): string {
  const words = OPERATOR_WORDS[condition.operator]
  const exact =
    condition.case_sensitive === true &&
    !['is_empty', 'is_not_empty', 'greater_than', 'greater_or_equal', 'less_than', 'less_or_equal'].includes(condition.operator)
  const cased = exact ? ' (exact case)' : ''
  if (condition.operator === 'is_empty' || condition.operator === 'is_not_empty') return `${condition.attribute} ${words}`
  if (condition.operator === 'in' || condition.operator === 'not_in') {
    const values = condition.values ?? []
    const shown = values.slice(0, 5).map(quote).join(', ') + (values.length > 5 ? ` and ${values.length - 5} more` : '')
    return `${condition.attribute} ${words} ${shown}${cased}`
  }
  if (condition.operator === 'length_greater_than') return `${condition.attribute} ${words} ${condition.value ?? ''} characters`
  return `${condition.attribute} ${words} ${quote(condition.value ?? '')}${cased}`
}

export function groupWords(group: Group, nested = false): string {
  const [items, joiner] = 'all' in group ? [group.all, ' and '] : [group.any, ' or ']
  const text = items.map((item) => ('attribute' in item ? conditionWords(item) : groupWords(item, true))).join(joiner)
  return nested && items.length > 1 ? `(${text})` : text
}

export function actionWords(action: Action, attribute: string | null): string {
  const target = attribute ?? ''
  switch (action.action) {
    case 'set':
      return `set ${target} to ${quote(action.value)}`
    case 'copy':
      return `copy ${action.from} into ${target}`
    case 'append':
      return `append ${quote(action.value)} to ${target}`
    case 'prepend':
      return `put ${quote(action.value)} before ${target}`
    case 'concat':
      return `set ${target} to ${action.parts.map((part) => ('attribute' in part ? part.attribute : quote(part.value))).join(' + ')}`
    case 'replace':
      return `replace ${quote(action.find)} with ${quote(action.replacement)} in ${target}`
    case 'map': {
      const n = Object.keys(action.entries).length
      return `map ${target} through ${counted(n, 'value')}${action.default === undefined ? '' : `, others to ${quote(action.default)}`}`
    }
    case 'regex_replace':
      return `replace the pattern ${quote(action.pattern)} with ${quote(action.replacement)} in ${target}`
    case 'split_take':
      return `keep part ${action.from ?? 0} of ${target} split at ${quote(action.separator)}`
    case 'case':
      return `write ${target} in ${action.to} case`
    case 'trim':
      return `trim ${target}`
    case 'strip_html':
      return `strip HTML from ${target}`
    case 'round':
      return `round ${target} to ${action.decimals ?? 2} decimals${action.mode && action.mode !== 'half_up' ? ` (${action.mode})` : ''}`
    case 'truncate':
      return `cut ${target} to ${action.max} characters`
    case 'default_if_empty':
      return `fill an empty ${target} with ${quote(action.value)}`
    case 'exclude':
      return 'leave the product out'
  }
}

export function ruleWords(rule: Omit<RuleSpec, 'id'>): string {
  const then = rule.then.map((action) => actionWords(action, rule.attribute)).join(', then ')
  const otherwise = rule.else.map((action) => actionWords(action, rule.attribute)).join(', then ')
  if (rule.if === null) return capital(then)
  return `If ${groupWords(rule.if)}: ${then}${otherwise ? `; otherwise ${otherwise}` : ''}`
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
