import { BadRequestError } from '../errors.js'
import { attributeName, checkPattern, RULE_LIMITS, ruleFlag, ruleText } from './rule-values.js'
import type { Action, ConcatPart } from './rule-types.js'

// The parameters of each action, checked: a missing or wrong one is a 400 naming it
// (`then[0].separator: …`). What each action does is src/rules/rule-sql.ts.

type Input = Record<string, unknown>

/**
 * A text naming at most RULE_LIMITS.templateReferences `{attribute}`s: each copies a value of up to
 * RULE_LIMITS.writtenChars characters, and 600 of them in one value took a preview past its timeout.
 */
function boundedTemplate(text: string, field: string): string {
  const references = text.match(/\{[^{}]+\}/g)?.length ?? 0
  if (references > RULE_LIMITS.templateReferences) {
    throw new BadRequestError(`${field}: names ${references} {attribute}s; at most ${RULE_LIMITS.templateReferences} in one text`)
  }
  return text
}

/** An action of a known name with its parameters checked. */
export function checkAction(input: Input, path: string): Action {
  const text = (key: string, optional?: { fallback: string }) =>
    boundedTemplate(ruleText(input[key], `${path}.${key}`, optional ? { optional: true, fallback: optional.fallback } : {}), `${path}.${key}`)
  const flag = (key: string, fallback: boolean) => ruleFlag(input[key], `${path}.${key}`, fallback)
  switch (input.action) {
    case 'set':
    case 'default_if_empty':
      return { action: input.action, value: text('value') }
    case 'copy':
      return { action: 'copy', from: attributeName(input.from, `${path}.from`) }
    case 'append':
    case 'prepend':
      return { action: input.action, value: text('value'), separator: text('separator', { fallback: '' }) }
    case 'concat':
      return { action: 'concat', parts: concatParts(input.parts, `${path}.parts`), separator: text('separator', { fallback: ' ' }) }
    case 'replace': {
      const find = text('find')
      if (find === '') throw new BadRequestError(`${path}.find: must not be empty`)
      return { action: 'replace', find, replacement: text('replacement', { fallback: '' }), case_sensitive: flag('case_sensitive', true) }
    }
    case 'map':
      return mapAction(input, path)
    case 'regex_replace':
      return {
        action: 'regex_replace',
        pattern: checkPattern(input.pattern, `${path}.pattern`),
        replacement: text('replacement', { fallback: '' }),
        case_sensitive: flag('case_sensitive', true),
      }
    case 'split_take':
      return splitTake(input, path)
    case 'case': {
      const to = input.to
      if (to !== 'lower' && to !== 'upper' && to !== 'title' && to !== 'sentence')
        throw new BadRequestError(`${path}.to: must be lower, upper, title or sentence`)
      return { action: 'case', to }
    }
    case 'round': {
      const mode = input.mode ?? 'half_up'
      if (mode !== 'half_up' && mode !== 'up' && mode !== 'down') throw new BadRequestError(`${path}.mode: must be half_up, up or down`)
      return { action: 'round', decimals: whole(input.decimals, `${path}.decimals`, { min: 0, max: 6, fallback: 2 }), mode }
    }
    case 'truncate': {
      const max = whole(input.max, `${path}.max`, { min: 1, max: 100_000 })
      const suffix = text('suffix', { fallback: '' })
      // The suffix counts in max: one as long leaves no room for the value, a longer one would pass max.
      if ([...suffix].length >= max) throw new BadRequestError(`${path}.suffix: must be shorter than max (${max} characters)`)
      return { action: 'truncate', max, suffix }
    }
    default:
      return { action: input.action as 'trim' | 'strip_html' | 'exclude' }
  }
}

function concatParts(value: unknown, field: string): ConcatPart[] {
  if (!Array.isArray(value) || value.length === 0) throw new BadRequestError(`${field}: a non-empty list of {"attribute": …} and {"value": …} is required`)
  if (value.length > RULE_LIMITS.groupItems) throw new BadRequestError(`${field}: at most ${RULE_LIMITS.groupItems} parts`)
  return value.map((part: unknown, i): ConcatPart => {
    const at = `${field}[${i}]`
    if (typeof part === 'object' && part !== null && 'attribute' in part) return { attribute: attributeName((part as Input).attribute, `${at}.attribute`) }
    if (typeof part === 'object' && part !== null && 'value' in part) return { value: ruleText((part as Input).value, `${at}.value`) }
    throw new BadRequestError(`${at}: {"attribute": "<name>"} or {"value": "<text>"} is required`)
  })
}

function mapAction(input: Input, path: string): Action {
  const entries = input.entries
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries) || Object.keys(entries).length === 0) {
    throw new BadRequestError(`${path}.entries: an object of values and what each becomes is required ({"in stock": "in_stock"})`)
  }
  const pairs = Object.entries(entries as Input)
  if (pairs.length > RULE_LIMITS.listEntries) throw new BadRequestError(`${path}.entries: at most ${RULE_LIMITS.listEntries} entries`)
  const caseSensitive = ruleFlag(input.case_sensitive, `${path}.case_sensitive`, false)
  const seen = new Map<string, string>()
  const checked: [string, string][] = []
  for (const [from, to] of pairs) {
    const key = ruleText(from, `${path}.entries key`)
    const folded = caseSensitive ? key : key.toLowerCase()
    const twin = seen.get(folded)
    if (twin !== undefined) throw new BadRequestError(`${path}.entries: "${twin}" and "${key}" are the same value when case is ignored`)
    seen.set(folded, key)
    checked.push([key, ruleText(to, `${path}.entries["${key}"]`)])
  }
  const fallback = input.default === undefined || input.default === null ? undefined : ruleText(input.default, `${path}.default`)
  // Own properties whatever their names: assigned one by one, an entry "__proto__" would be lost.
  return { action: 'map', entries: Object.fromEntries(checked), case_sensitive: caseSensitive, ...(fallback === undefined ? {} : { default: fallback }) }
}

function splitTake(input: Input, path: string): Action {
  const separator = ruleText(input.separator, `${path}.separator`)
  if (separator === '') throw new BadRequestError(`${path}.separator: must not be empty`)
  const from = whole(input.from, `${path}.from`, { min: -1000, max: 1000, fallback: 0 })
  const count = whole(input.count, `${path}.count`, { min: 1, max: 1000, fallback: 1 })
  return { action: 'split_take', separator, from, count, join: ruleText(input.join, `${path}.join`, { optional: true, fallback: separator }) }
}

function whole(value: unknown, field: string, bounds: { min: number; max: number; fallback?: number }): number {
  if ((value === undefined || value === null) && bounds.fallback !== undefined) return bounds.fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw new BadRequestError(`${field}: must be a whole number from ${bounds.min} to ${bounds.max}`)
  }
  return value
}
