import type { ChannelTemplate, Condition, GroupRule, Severity, TemplateAttribute, ValueRule } from './template-types.js'

// Every check of a template has a code, and every code a bit of one of two bigints a channel stage
// row keeps: `issues` for what fails (errors and warnings), `notes` for what the export rewrote into
// the channel's spelling (info). 8 bytes each a product, whatever it fails. A template therefore has
// at most 63 codes of each; checkCodes refuses one with more, a programming error the template tests
// meet first.

export const MAX_CODES = 63
/** The longest offending value a diagnostic or the skipped file quotes, in characters. */
export const MAX_QUOTED_VALUE = 200

/** The bigint column a code's bit is kept in. */
export type CodeWord = 'issues' | 'notes'

/**
 * How a value was rewritten into the channel's spelling: another spelling of a listed value, a
 * price or amount written another way (`spelling`); a bare price given the channel's currency; an
 * amount written with the channel's currency, which the file leaves out.
 */
export type RewriteKind = 'spelling' | 'currency_added' | 'currency_removed'

/** One check of a template, as diagnostics show it. */
export interface CheckCode {
  code: string
  /** Its bit in its word (stage_product.issues or .notes): 1n << bit. */
  bit: number
  word: CodeWord
  attribute: string
  severity: Severity
  message: string
  hint: string
  /** What it checks: an attribute's presence, one of its value rules, a group rule, or a rewrite by one of its rules. */
  check:
    | { kind: 'missing'; unless?: Condition }
    | { kind: 'rule'; rule: ValueRule }
    | { kind: 'group'; rule: GroupRule }
    | { kind: 'rewrite'; rule: ValueRule; rewrite: RewriteKind }
}

const RULE_SUFFIX: Record<Exclude<ValueRule['kind'], 'not_above'>, string> = {
  max_length: 'too_long',
  one_of: 'invalid_value',
  url: 'invalid_url',
  price: 'invalid_price',
  gtin: 'invalid_gtin',
  integer: 'invalid_integer',
  number: 'invalid_number',
  measure: 'invalid_measure',
  date_range: 'invalid_date_range',
  pattern: 'invalid_format',
  category: 'invalid_format',
  // idealo's amounts were `number` rules once: their codes keep the name.
  amount: 'invalid_number',
}

const REWRITE_SUFFIX: Record<RewriteKind, string> = { spelling: 'normalised', currency_added: 'currency_added', currency_removed: 'currency_removed' }

/** The checks of `template` in a fixed order: per attribute its presence, its rules, its rewrites; then the group rules. */
export function checkCodes(template: ChannelTemplate): CheckCode[] {
  const codes: Omit<CheckCode, 'bit' | 'word'>[] = []
  const hintOf = (attribute: TemplateAttribute, text: string) =>
    template.attributeUrl ? `${text} See ${template.attributeUrl.replace('{name}', attribute.name)}` : text
  for (const attribute of template.attributes) {
    const { name, requirement } = attribute
    if (requirement !== 'optional') {
      codes.push({
        code: `${name}_missing`,
        attribute: name,
        severity: requirement === 'required' ? 'error' : 'warning',
        message: `${name} is ${requirement} and empty`,
        hint: hintOf(attribute, `Give every product a ${name}: ${attribute.description}`),
        check: attribute.missingUnless ? { kind: 'missing', unless: attribute.missingUnless } : { kind: 'missing' },
      })
    }
    const severity = attribute.ruleSeverity ?? (requirement === 'required' ? 'error' : 'warning')
    for (const rule of attribute.rules ?? []) {
      const { message, hint } = describeRule(name, rule)
      const suffix = rule.kind === 'not_above' ? `above_${rule.attribute}` : RULE_SUFFIX[rule.kind]
      codes.push({ code: `${name}_${suffix}`, attribute: name, severity, message, hint: hintOf(attribute, hint), check: { kind: 'rule', rule } })
    }
    for (const rule of attribute.rules ?? []) {
      for (const rewrite of rewritesOf(rule)) {
        const { message, hint } = describeRewrite(name, rule, rewrite)
        codes.push({ code: `${name}_${REWRITE_SUFFIX[rewrite]}`, attribute: name, severity: 'info', message, hint, check: { kind: 'rewrite', rule, rewrite } })
      }
    }
  }
  for (const rule of template.groupRules ?? []) {
    codes.push({ code: rule.code, attribute: rule.attribute, severity: rule.severity, message: rule.message, hint: rule.hint, check: { kind: 'group', rule } })
  }
  const seen = new Set<string>()
  for (const { code } of codes) {
    if (seen.has(code)) throw new Error(`template ${template.name} has the code ${code} twice`)
    seen.add(code)
  }
  const next: Record<CodeWord, number> = { issues: 0, notes: 0 }
  const numbered = codes.map((code) => {
    const word: CodeWord = code.severity === 'info' ? 'notes' : 'issues'
    return { ...code, word, bit: next[word]++ }
  })
  for (const word of ['issues', 'notes'] as const) {
    if (next[word] > MAX_CODES) throw new Error(`template ${template.name} has ${next[word]} checks kept in ${word}, more than ${MAX_CODES}`)
  }
  return numbered
}

/** The rewrites a rule makes, each an info code of its own. */
export function rewritesOf(rule: ValueRule): RewriteKind[] {
  switch (rule.kind) {
    case 'one_of':
    case 'category':
      return ['spelling']
    case 'price':
      return ['spelling', 'currency_added']
    case 'amount':
      return ['spelling', 'currency_removed']
    default:
      return []
  }
}

function describeRewrite(name: string, rule: ValueRule, rewrite: RewriteKind): { message: string; hint: string } {
  switch (rewrite) {
    case 'currency_added':
      return {
        message: `${name} was a bare number: the channel's currency was added`,
        hint: `The channel reads both forms; send "<amount> <currency>" to choose the currency per product.`,
      }
    case 'currency_removed':
      return {
        message: `${name} was written with the channel's currency: the file carries the bare number`,
        hint: `The channel reads a bare number in its currency; send 29.99 rather than 29.99 EUR to skip the rewrite.`,
      }
    case 'spelling':
      return {
        message: `${name} was written in another spelling than the channel's: the file carries the channel's own`,
        hint: `The file carries ${spellingOf(rule)}; send it so to skip the rewrite.`,
      }
  }
}

function spellingOf(rule: ValueRule): string {
  switch (rule.kind) {
    case 'one_of':
      return `exactly one of ${rule.values.join(', ')}${rule.list ? ` (up to ${rule.list.max}, separated by ", ")` : ''}`
    case 'price':
      return 'the amount with a decimal point, a space and the ISO 4217 code in capitals (15.00 EUR)'
    case 'amount':
      return 'the amount as a bare number with a decimal point (29.99)'
    case 'category':
      return 'the category id, or its path with " > " between levels and no blanks around it'
    default:
      return 'the value as the channel writes it'
  }
}

function describeRule(name: string, rule: ValueRule): { message: string; hint: string } {
  switch (rule.kind) {
    case 'max_length':
      return { message: `${name} has more than ${rule.max} characters`, hint: `Shorten ${name} to at most ${rule.max} characters.` }
    case 'one_of':
      return {
        message: `${name} is not one of ${rule.values.join(', ')}`,
        hint: `Send one of: ${rule.values.join(', ')}${aliasesOf(rule)} (in any case).`,
      }
    case 'url':
      return { message: `${name} is not an absolute http(s) URL`, hint: `Send a full address starting with https:// (or http://), without spaces.` }
    case 'price':
      return {
        message: `${name} is not a price with an ISO 4217 currency`,
        hint: `Write it as a number with a decimal point, a space and a currency code: 15.00 EUR (no thousands separator).`,
      }
    case 'amount':
      return {
        message: `${name} is not an amount in the channel's currency${bounds(rule)}`,
        hint: `Send a number with a decimal point, in the channel's currency${bounds(rule)}: 29.99 (no thousands separator, no other currency).`,
      }
    case 'category':
      return {
        message: `${name} is not a category id or path`,
        hint: `Send the numeric id of a category of Google's taxonomy, or its full path: Apparel & Accessories > Clothing > Shirts & Tops.`,
      }
    case 'not_above':
      return { message: `${name} is above ${rule.attribute}`, hint: `A ${name} must not be higher than the ${rule.attribute} in the same currency.` }
    case 'gtin':
      return {
        message: `${name} is not a valid GTIN`,
        hint: `A GTIN has 8, 12, 13 or 14 digits and ends with the GS1 check digit of the others; leave it empty when the product has none.`,
      }
    case 'integer':
      return { message: `${name} is not a whole number${bounds(rule)}`, hint: `Send digits only${bounds(rule)}.` }
    case 'number':
      return { message: `${name} is not a number${bounds(rule)}`, hint: `Send a number with a point as the decimal separator${bounds(rule)}.` }
    case 'measure':
      return {
        message: `${name} is not a number with a unit`,
        hint: `Write it as a number, a space and one of ${rule.units.join(', ')}: 1.5 ${rule.units[0] ?? ''}.`,
      }
    case 'date_range':
      return {
        message: `${name} is not a date range`,
        hint: `Write two ISO 8601 date-times separated by "/": 2026-12-01T00:00+01:00/2026-12-24T23:59+01:00.`,
      }
    case 'pattern':
      return { message: `${name} is not ${rule.expected}`, hint: `Send ${rule.expected}.` }
  }
}

function aliasesOf(rule: { aliases?: Readonly<Record<string, string>> }): string {
  const aliases = Object.entries(rule.aliases ?? {})
  return aliases.length === 0 ? '' : `, or ${aliases.map(([alias, value]) => `${alias} for ${value}`).join(', ')}`
}

function bounds(rule: { min?: number; max?: number }): string {
  if (rule.min !== undefined && rule.max !== undefined) return ` from ${rule.min} to ${rule.max}`
  if (rule.min !== undefined) return ` of at least ${rule.min}`
  if (rule.max !== undefined) return ` of at most ${rule.max}`
  return ''
}
