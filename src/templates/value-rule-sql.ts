import type { SqlQuoter } from '../feeds/sql-quoter.js'
import type { ValueRule } from './template-types.js'

// The SQL of one value rule of a template (template-types.ts): true when a non-blank value follows
// it. Each is written for the cost of a check repeated a million times in an export: text functions
// and byte searches rather than regular expressions where they can say the same (a match converts
// the text to wide characters first), values and parsed prices and GTINs read from columns the
// caller selects once per row.

const NUMBER = '[0-9]+(\\.[0-9]+)?'
const ISO_DATE_TIME = '[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?'

/** What a check's SQL is written with. */
export interface CheckContext {
  q: SqlQuoter
  /** The SQL of an attribute's value ('' when no column carries it). */
  value(attribute: string): string
  /**
   * The SQL of an attribute's parsed value of a kind, or NULL when it has none: `canonical`, its
   * value in the channel's spelling (spelling-sql.ts), NULL when it is no spelling of a valid
   * one; `gtin`, the number.
   */
  parsed(attribute: string, kind: ParsedKind): string
  /** The channel's currency: a bare price takes it, an amount is in it; null when none. */
  currency: string | null
}

export type ParsedKind = 'canonical' | 'gtin'

/** SQL that is true when the non-blank value of `attribute` follows `rule`. */
export function validSql(context: CheckContext, rule: ValueRule, attribute: string): string {
  const { q } = context
  const v = context.value(attribute)
  const matches = (regex: string) => `${v} ~ ${q.escapeLiteral(regex)}`
  const canonical = context.parsed(attribute, 'canonical')
  switch (rule.kind) {
    case 'max_length':
      // Bytes first: no more bytes than the limit is no more characters, and costs nothing to count.
      return `(octet_length(${v}) <= ${rule.max} OR char_length(${v}) <= ${rule.max})`
    case 'one_of':
    case 'category':
      return `${canonical} IS NOT NULL`
    case 'url': {
      // Prefixes and byte searches, not a regular expression: a quarter of the time (measured).
      const host = (at: number) => `substr(${v}, ${at}, 1) NOT IN ('', '/', '?', '#')`
      // The scheme in lower case, as nearly every address has it, by LIKE first: half the time of lower() (measured).
      const scheme =
        `CASE WHEN ${v} LIKE 'https://%' THEN ${host(9)} WHEN ${v} LIKE 'http://%' THEN ${host(8)} ` +
        `WHEN lower(left(${v}, 8)) = 'https://' THEN ${host(9)} WHEN lower(left(${v}, 7)) = 'http://' THEN ${host(8)} ELSE false END`
      const blanks = [' ', '\\t', '\\n', '\\r', '\\f'].map((c) => `strpos(${v}, E'${c}') = 0`).join(' AND ')
      return `(${scheme} AND ${blanks})`
    }
    case 'price':
      return `${canonical} IS NOT NULL`
    case 'amount':
      return `(${canonical} IS NOT NULL${boundsOf(`(${canonical})::numeric`, rule)})`
    case 'not_above':
      return notAboveSql(context, attribute, rule.attribute)
    case 'gtin':
      return gtinSql(context.parsed(attribute, 'gtin'))
    case 'integer':
      return boundedSql(v, '^-?[0-9]{1,15}$', rule, q)
    case 'number':
      return boundedSql(v, '^-?[0-9]{1,15}(\\.[0-9]{1,6})?$', rule, q)
    case 'measure':
      return matches(`^${NUMBER} (${rule.units.map(escapeRegex).join('|')})$`)
    case 'date_range':
      return matches(`^${ISO_DATE_TIME}/${ISO_DATE_TIME}$`)
    case 'pattern':
      return matches(rule.regex)
  }
}

function boundedSql(v: string, regex: string, rule: { min?: number; max?: number }, q: SqlQuoter): string {
  const shape = `${v} ~ ${q.escapeLiteral(regex)}`
  const bounds = boundsOf(`(${v})::numeric`, rule)
  return bounds === '' ? shape : `CASE WHEN ${shape} THEN true${bounds} ELSE false END`
}

/** SQL: ` AND` the number `n` within the rule's bounds, or '' when it has none. */
function boundsOf(n: string, rule: { min?: number; max?: number }): string {
  return [rule.min === undefined ? '' : ` AND ${n} >= ${rule.min}`, rule.max === undefined ? '' : ` AND ${n} <= ${rule.max}`].join('')
}

/**
 * SQL: `v` is empty or only blanks: spaces, tabs, line ends (what the XML writer writes no element
 * for), and no-break spaces, which a spreadsheet's "empty" cell may hold. One call for a value that
 * starts with none of them (ascii('') is 0): the blanks are looked for only when the first
 * character is one.
 */
export function blankSql(v: string): string {
  return `((ascii(${v}) <= 32 OR ascii(${v}) = 160) AND btrim(${v}, E' \\t\\n\\r\\u00a0') = '')`
}

/**
 * SQL: the parsed GTIN `n` (a number, null when not 8, 12, 13 or 14 digits) has the GS1 check digit:
 * its digits weighted 1, 3, 1, … from the right sum to a multiple of 10. Integer arithmetic on the
 * number parsed once, two digits at a time: each pair's weighted sum (3 × tens + ones) is looked up
 * in a list of the hundred (the same on the text cost 8 µs a value, digit by digit 0.26, this 0.19:
 * measured).
 */
export function gtinSql(n: string): string {
  const weighted = `'{${Array.from({ length: 100 }, (_, pair) => 3 * Math.floor(pair / 10) + (pair % 10)).join(',')}}'::int[]`
  const pairs = Array.from({ length: 7 }, (_, k) => `(${weighted})[(${n} / ${(100n ** BigInt(k)).toString()}) % 100 + 1]`)
  return `(${n} IS NOT NULL AND (${pairs.join(' + ')}) % 10 = 0)`
}

/**
 * A sale price above the price fails; prices that are not both valid, or in different currencies,
 * are the price rules' to report. Both are read as the file writes them ("12.50 EUR").
 */
function notAboveSql(context: CheckContext, sale: string, price: string): string {
  // Written as "<amount> <code>": the code is the last three characters.
  const canonical = (attribute: string) => context.parsed(attribute, 'canonical')
  const unit = (attribute: string) => `right(${canonical(attribute)}, 3)`
  const amount = (attribute: string) => `left(${canonical(attribute)}, -4)::numeric`
  const valid = `${canonical(sale)} IS NOT NULL AND ${canonical(price)} IS NOT NULL AND ${unit(sale)} = ${unit(price)}`
  return `CASE WHEN ${valid} THEN ${amount(sale)} <= ${amount(price)} ELSE true END`
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
