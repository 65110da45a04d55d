import type { SqlQuoter } from '../feeds/feed-sql.js'
import { ISO_4217_CODES } from './iso-4217.js'
import { checkCodes, type CheckCode } from './template-codes.js'
import type { ChannelTemplate, GroupRule, ValueRule } from './template-types.js'

// A template's checks as SQL over one row's mapped object, so that checking runs inside the
// export's own statements, row by row, beside the rendering of the line: no row leaves Postgres to
// be checked. Each check is a CASE adding its bit; a value is read from the object where it is
// used (reading it once in a subquery per row costs more, as for the lines: feed-sql.ts).

/** How a channel applies its template. */
export interface TemplateSettings {
  /** ISO 4217 code added to bare-number prices where the template's channel reads both forms; null: none. */
  currency: string | null
}

/** A template compiled for one channel's columns. */
export interface CompiledChecks {
  codes: CheckCode[]
  /** The output columns whose values the checks read. */
  checkedColumns: string[]
  /**
   * SQL: the row's issues as a bigint of bits (null when none). `read` gives the SQL of a checked
   * column's value as text ('' when the row has none): read once per row by the caller, since each
   * check reads it again (a jsonb lookup each time cost more than the checks, measured).
   */
  issues(read: (column: string) => string): string
  /**
   * SQL: the value of `column` as the feed writes it, from its value as mapped (the SQL `value`): a
   * bare price with the channel's currency added. The stage keeps the value as mapped; the line
   * carries it normalised.
   */
  exportedValue(column: string, value: string): string
  /** The bits of the codes of severity `error`: a row with one of them is left out in mode exclude. */
  errorMask: bigint
  warningMask: bigint
}

const NUMBER = '[0-9]+(\\.[0-9]+)?'
const BARE_PRICE = '^[0-9]+(\\.[0-9]{1,2})?$'
// A price's shape, then its currency looked up in the codes as one text: a regular expression of
// the 177 codes as alternatives costs tens of microseconds a value (measured), this a few.
const PRICE_SHAPE = `^${NUMBER} [A-Z]{3}$`
const CURRENCIES = ISO_4217_CODES.join('|')
const ISO_DATE_TIME = '[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?'

/**
 * The output column that carries each attribute: the column of its name, or of its name with a `g:`
 * prefix (Google's RSS elements). An attribute no column carries is empty on every row.
 */
export function attributeColumns(columns: readonly string[]): Map<string, string> {
  const columnOf = new Map<string, string>()
  for (const column of columns) {
    const attribute = column.startsWith('g:') ? column.slice(2) : column
    if (!columnOf.has(attribute)) columnOf.set(attribute, column)
  }
  return columnOf
}

/** `template`'s checks compiled for a channel whose output columns are `columns`. */
export function compileChecks(q: SqlQuoter, template: ChannelTemplate, columns: readonly string[], settings: TemplateSettings): CompiledChecks {
  const codes = checkCodes(template)
  const columnOf = attributeColumns(columns)
  const checked = new Set(codes.flatMap((code) => attributesOf(code).filter((a) => columnOf.has(a))))
  const valueOf = (read: (column: string) => string, attribute: string) => {
    const column = columnOf.get(attribute)
    return column === undefined ? `''` : read(column)
  }
  const currency = template.normalisesBarePrices && settings.currency ? settings.currency : null
  const normalisedColumns = new Set(
    codes.flatMap((c) => (c.check.kind === 'normalised' && columnOf.has(c.attribute) ? [columnOf.get(c.attribute) ?? c.attribute] : [])),
  )
  const mask = (severity: string) => codes.filter((c) => c.severity === severity).reduce((bits, c) => bits | (1n << BigInt(c.bit)), 0n)
  return {
    codes,
    checkedColumns: [...checked].map((attribute) => columnOf.get(attribute) ?? attribute),
    issues(read) {
      const value = (attribute: string) => valueOf(read, attribute)
      const parts = [
        ...template.attributes.map((attribute) => attributeIssuesSql(q, codes, attribute.name, value, currency)),
        ...codes.flatMap((code) =>
          code.check.kind === 'group' ? [`CASE WHEN ${groupFailedSql(q, code.check.rule, value)} THEN ${bitOf(code)} ELSE 0 END`] : [],
        ),
      ].filter((part) => part !== '0')
      return parts.length === 0 ? 'NULL::bigint' : `nullif(${parts.join(' + ')}, 0)`
    },
    exportedValue(column, value) {
      const normalised = currency !== null && normalisedColumns.has(column)
      if (!normalised) return value
      const withCurrency = `round((${value})::numeric, 2)::text || ${q.escapeLiteral(` ${currency}`)}`
      return `CASE WHEN ${value} ~ ${q.escapeLiteral(BARE_PRICE)} THEN ${withCurrency} ELSE ${value} END`
    },
    errorMask: mask('error'),
    warningMask: mask('warning'),
  }
}

function bitOf(code: CheckCode): string {
  return `${(1n << BigInt(code.bit)).toString()}::bigint`
}

/**
 * SQL: the bits of one attribute's own checks (its presence, its rules, its normalisation), or '0'
 * when none can fail. Whether the value is blank is asked once: a blank value is the presence
 * check's to report, not every rule's.
 */
function attributeIssuesSql(q: SqlQuoter, codes: CheckCode[], attribute: string, value: (attribute: string) => string, currency: string | null): string {
  const own = codes.filter((code) => code.attribute === attribute && code.check.kind !== 'group')
  const missing = own.find((code) => code.check.kind === 'missing')
  const v = value(attribute)
  if (v === `''`) return missing ? bitOf(missing) : '0'
  const present = own.flatMap((code) => {
    if (code.check.kind === 'rule') return [`CASE WHEN ${validSql(q, code.check.rule, v, value, currency)} THEN 0 ELSE ${bitOf(code)} END`]
    if (code.check.kind === 'normalised' && currency !== null) return [`CASE WHEN ${v} ~ ${q.escapeLiteral(BARE_PRICE)} THEN ${bitOf(code)} ELSE 0 END`]
    return []
  })
  if (!missing && present.length === 0) return '0'
  return `CASE WHEN ${blankSql(v)} THEN ${missing ? bitOf(missing) : '0'} ELSE ${present.length === 0 ? '0' : present.join(' + ')} END`
}

function groupFailedSql(q: SqlQuoter, rule: GroupRule, value: (attribute: string) => string): string {
  const empty = (attribute: string) => blankSql(value(attribute))
  const failures: string[] = []
  for (const attribute of rule.all ?? []) failures.push(empty(attribute))
  if (rule.any && rule.any.length > 0) failures.push(`(${rule.any.map(empty).join(' AND ')})`)
  const failed = failures.length === 0 ? 'false' : `(${failures.join(' OR ')})`
  if (!rule.unless) return failed
  const exempt = `${value(rule.unless.attribute)} IN (${rule.unless.values.map((v) => q.escapeLiteral(v)).join(', ')})`
  return `(${failed} AND NOT ${exempt})`
}

/** SQL that is true when the non-empty value `v` follows `rule`. */
function validSql(q: SqlQuoter, rule: ValueRule, v: string, value: (attribute: string) => string, currency: string | null): string {
  const matches = (regex: string) => `${v} ~ ${q.escapeLiteral(regex)}`
  switch (rule.kind) {
    case 'max_length':
      // Bytes first: no more bytes than the limit is no more characters, and costs nothing to count.
      return `(octet_length(${v}) <= ${rule.max} OR char_length(${v}) <= ${rule.max})`
    case 'one_of':
      return `${v} IN (${rule.values.map((x) => q.escapeLiteral(x)).join(', ')})`
    case 'url':
      return `${v} ~ ${q.escapeLiteral('^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+([/?#]\\S*)?$')}`
    case 'price':
      return currency === null ? priceSql(q, v) : `(${priceSql(q, v)} OR ${matches(BARE_PRICE)})`
    case 'not_above':
      return notAboveSql(q, v, value(rule.attribute), currency)
    case 'gtin':
      return gtinSql(q, v)
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
  const bounds = [rule.min === undefined ? null : `(${v})::numeric >= ${rule.min}`, rule.max === undefined ? null : `(${v})::numeric <= ${rule.max}`].filter(
    (b) => b !== null,
  )
  const shape = `${v} ~ ${q.escapeLiteral(regex)}`
  return bounds.length === 0 ? shape : `CASE WHEN ${shape} THEN ${bounds.join(' AND ')} ELSE false END`
}

/** SQL: `v` is empty or only blanks; the blanks are looked for only when the first character is one. */
function blankSql(v: string): string {
  return `(${v} = '' OR (ascii(${v}) <= 32 AND btrim(${v}) = ''))`
}

/** The attributes a check reads. */
function attributesOf(code: CheckCode): string[] {
  if (code.check.kind === 'group') {
    const { all = [], any = [], unless } = code.check.rule
    return [code.attribute, ...all, ...any, ...(unless ? [unless.attribute] : [])]
  }
  if (code.check.kind === 'rule' && code.check.rule.kind === 'not_above') return [code.attribute, code.check.rule.attribute]
  return [code.attribute]
}

/**
 * SQL: `v` is a GTIN-8, -12, -13 or -14 with the GS1 check digit: padded to 14 digits, weighted 3
 * and 1 from the left, they sum to a multiple of 10. Inline arithmetic: a SQL function doing the
 * same is not inlined and cost 20 µs a value (measured), this under 1 µs.
 */
function gtinSql(q: SqlQuoter, v: string): string {
  const padded = `lpad(${v}, 14, '0')`
  const digit = (position: number) => `(ascii(substr(${padded}, ${position}, 1)) - 48)`
  const odd = [1, 3, 5, 7, 9, 11, 13].map(digit).join(' + ')
  const even = [2, 4, 6, 8, 10, 12, 14].map(digit).join(' + ')
  return `(${v} ~ ${q.escapeLiteral('^([0-9]{8}|[0-9]{12,14})$')} AND (3 * (${odd}) + ${even}) % 10 = 0)`
}

/** SQL: `v` is a number, a space and an ISO 4217 code. */
function priceSql(q: SqlQuoter, v: string): string {
  return `(${v} ~ ${q.escapeLiteral(PRICE_SHAPE)} AND strpos(${q.escapeLiteral(CURRENCIES)}, right(${v}, 3)) > 0)`
}

/**
 * A sale price above the price fails; prices that are not both valid, or in different currencies,
 * are the price rules' to report. A bare number has the channel's currency.
 */
function notAboveSql(q: SqlQuoter, sale: string, price: string, currency: string | null): string {
  const shape = q.escapeLiteral(currency === null ? PRICE_SHAPE : `^${NUMBER}( [A-Z]{3})?$`)
  const unit = (v: string) => `CASE WHEN strpos(${v}, ' ') > 0 THEN right(${v}, 3) ELSE ${q.escapeLiteral(currency ?? '')} END`
  const amount = (v: string) => `split_part(${v}, ' ', 1)::numeric`
  return `CASE WHEN ${sale} ~ ${shape} AND ${price} ~ ${shape} AND ${unit(sale)} = ${unit(price)} THEN ${amount(sale)} <= ${amount(price)} ELSE true END`
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
