import type { ChannelTemplate, GroupRule, Severity, TemplateAttribute, ValueRule } from './template-types.js'

// Every check of a template has a code, and every code a bit of the bigint a channel stage row keeps
// its issues in (stage_product.issues): 8 bytes a product, whatever it fails. A template therefore
// has at most 63 codes; checkCodes refuses one with more, a programming error the template tests meet first.

export const MAX_CODES = 63

/** One check of a template, as diagnostics show it. */
export interface CheckCode {
  code: string
  /** Its bit in stage_product.issues: 1n << bit. */
  bit: number
  attribute: string
  severity: Severity
  message: string
  hint: string
  /** What it checks: an attribute's presence, one of its value rules, a group rule, or a normalisation. */
  check: { kind: 'missing' } | { kind: 'rule'; rule: ValueRule } | { kind: 'group'; rule: GroupRule } | { kind: 'normalised' }
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
}

/** The checks of `template` in a fixed order: per attribute its presence, its rules, its normalisation; then the group rules. */
export function checkCodes(template: ChannelTemplate): CheckCode[] {
  const codes: Omit<CheckCode, 'bit'>[] = []
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
        check: { kind: 'missing' },
      })
    }
    const severity = attribute.ruleSeverity ?? (requirement === 'required' ? 'error' : 'warning')
    for (const rule of attribute.rules ?? []) {
      const { message, hint } = describeRule(name, rule)
      const suffix = rule.kind === 'not_above' ? `above_${rule.attribute}` : RULE_SUFFIX[rule.kind]
      codes.push({ code: `${name}_${suffix}`, attribute: name, severity, message, hint: hintOf(attribute, hint), check: { kind: 'rule', rule } })
    }
    if (template.normalisesBarePrices && attribute.rules?.some((rule) => rule.kind === 'price')) {
      codes.push({
        code: `${name}_currency_added`,
        attribute: name,
        severity: 'info',
        message: `${name} was a bare number: the channel's currency was added`,
        hint: `The channel reads both forms; send "<amount> <currency>" to choose the currency per product.`,
        check: { kind: 'normalised' },
      })
    }
  }
  for (const rule of template.groupRules ?? []) {
    codes.push({ code: rule.code, attribute: rule.attribute, severity: rule.severity, message: rule.message, hint: rule.hint, check: { kind: 'group', rule } })
  }
  if (codes.length > MAX_CODES) throw new Error(`template ${template.name} has ${codes.length} checks, more than ${MAX_CODES}`)
  const seen = new Set<string>()
  for (const { code } of codes) {
    if (seen.has(code)) throw new Error(`template ${template.name} has the code ${code} twice`)
    seen.add(code)
  }
  return codes.map((code, bit) => ({ ...code, bit }))
}

function describeRule(name: string, rule: ValueRule): { message: string; hint: string } {
  switch (rule.kind) {
    case 'max_length':
      return { message: `${name} has more than ${rule.max} characters`, hint: `Shorten ${name} to at most ${rule.max} characters.` }
    case 'one_of':
      return { message: `${name} is not one of ${rule.values.join(', ')}`, hint: `Send exactly one of: ${rule.values.join(', ')}.` }
    case 'url':
      return { message: `${name} is not an absolute http(s) URL`, hint: `Send a full address starting with https:// (or http://), without spaces.` }
    case 'price':
      return { message: `${name} is not a price with an ISO 4217 currency`, hint: `Write it as a number, a space and a currency code: 15.00 EUR.` }
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

function bounds(rule: { min?: number; max?: number }): string {
  if (rule.min !== undefined && rule.max !== undefined) return ` from ${rule.min} to ${rule.max}`
  if (rule.min !== undefined) return ` of at least ${rule.min}`
  if (rule.max !== undefined) return ` of at most ${rule.max}`
  return ''
}
