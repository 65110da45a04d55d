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
   * Values parsed once per row from the checked columns before the checks read them (a price's
   * amount and currency, a GTIN as a number): each `alias` is `sql(read)`, selected beside them.
   */
  parsed: { alias: string; sql(read: (column: string) => string): string }[]
  /**
   * SQL: the row's issues as a bigint of bits (null when none). `read` gives the SQL of a checked
   * column's value as text ('' when the row has none), `readParsed` of a parsed alias: both read once per row
   * by the caller, since the checks read them again and again (measured: a jsonb lookup or a regular
   * expression each time cost more than all the checks).
   */
  issues(read: (column: string) => string, readParsed: (alias: string) => string): string
  /**
   * SQL: the value of `column` as the feed writes it, from its value as mapped (the SQL `value`) and
   * the row's issues (the SQL `issues`): a bare price with the channel's currency added, which its
   * info bit says. The stage keeps the value as mapped; the line carries it normalised.
   */
  exportedValue(column: string, value: string, issues: string): string
  /** The bits of the codes of severity `error`: a row with one of them is left out in mode exclude. */
  errorMask: bigint
  warningMask: bigint
}

const NUMBER = '[0-9]+(\\.[0-9]+)?'
// A price's currency is looked up in the codes as one text: a regular expression of the 177 codes
// as alternatives costs tens of microseconds a value (measured), this well under one.
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
  const normalisedColumns = new Map(
    codes.flatMap((c) => (c.check.kind === 'normalised' && columnOf.has(c.attribute) ? [[columnOf.get(c.attribute) ?? c.attribute, c] as const] : [])),
  )
  const parsed = parsedValues(template, columnOf)
  const mask = (severity: string) => codes.filter((c) => c.severity === severity).reduce((bits, c) => bits | (1n << BigInt(c.bit)), 0n)
  return {
    codes,
    checkedColumns: [...checked].map((attribute) => columnOf.get(attribute) ?? attribute),
    parsed: parsed.map(({ alias, sql }) => ({ alias, sql })),
    issues(read, readParsed) {
      const value = (attribute: string) => valueOf(read, attribute)
      const parsedOf = (attribute: string, kind: ParsedKind) => {
        const found = parsed.find((p) => p.attribute === attribute && p.kind === kind)
        return found ? readParsed(found.alias) : 'NULL'
      }
      const context: CheckContext = { q, value, parsed: parsedOf, currency }
      const parts = [
        ...template.attributes.map((attribute) => attributeIssuesSql(context, codes, attribute.name)),
        ...codes.flatMap((code) =>
          code.check.kind === 'group' ? [`CASE WHEN ${groupFailedSql(q, code.check.rule, value)} THEN ${bitOf(code)} ELSE 0 END`] : [],
        ),
      ].filter((part) => part !== '0')
      return parts.length === 0 ? 'NULL::bigint' : `nullif(${parts.join(' + ')}, 0)`
    },
    exportedValue(column, value, issues) {
      const code = currency === null ? undefined : normalisedColumns.get(column)
      if (!code) return value
      const withCurrency = `round((${value})::numeric, 2)::text || ${q.escapeLiteral(` ${currency}`)}`
      return `CASE WHEN coalesce(${issues} & ${bitOf(code)}, 0) <> 0 THEN ${withCurrency} ELSE ${value} END`
    },
    errorMask: mask('error'),
    warningMask: mask('warning'),
  }
}

function bitOf(code: CheckCode): string {
  return `${(1n << BigInt(code.bit)).toString()}::bigint`
}

/** What a check's SQL is written with. */
interface CheckContext {
  q: SqlQuoter
  /** The SQL of an attribute's value ('' when no column carries it). */
  value(attribute: string): string
  /** The SQL of an attribute's parsed value of a kind (price: its shape is right; gtin: the number), or NULL when it has none. */
  parsed(attribute: string, kind: ParsedKind): string
  currency: string | null
}

type ParsedKind = 'price' | 'gtin'

/** The values parsed once per row: every price a rule reads (amount and currency), every GTIN (as a number). */
function parsedValues(template: ChannelTemplate, columnOf: Map<string, string>) {
  const wanted: { attribute: string; kind: ParsedKind }[] = []
  const want = (attribute: string, kind: ParsedKind) => {
    if (columnOf.has(attribute) && !wanted.some((w) => w.attribute === attribute && w.kind === kind)) wanted.push({ attribute, kind })
  }
  for (const attribute of template.attributes) {
    for (const rule of attribute.rules ?? []) {
      if (rule.kind === 'price') want(attribute.name, 'price')
      if (rule.kind === 'not_above') [attribute.name, rule.attribute].forEach((a) => want(a, 'price'))
      if (rule.kind === 'gtin') want(attribute.name, 'gtin')
    }
  }
  return wanted.map(({ attribute, kind }, i) => {
    const column = columnOf.get(attribute) ?? attribute
    const alias = `parsed_${i}`
    const price = (v: string) => priceShapeSql(v)
    // Digits only, of a GTIN's lengths: as a number; else null. (14 digits fit a bigint.)
    const gtin = (v: string) => `CASE WHEN octet_length(${v}) IN (8, 12, 13, 14) AND translate(${v}, '0123456789', '') = '' THEN ${v}::bigint END`
    return { alias, attribute, kind, sql: (read: (column: string) => string) => (kind === 'price' ? price(read(column)) : gtin(read(column))) }
  })
}

/**
 * SQL: the bits of one attribute's own checks (its presence, its rules, its normalisation), or '0'
 * when none can fail. Whether the value is blank is asked once: a blank value is the presence
 * check's to report, not every rule's.
 */
function attributeIssuesSql(context: CheckContext, codes: CheckCode[], attribute: string): string {
  const own = codes.filter((code) => code.attribute === attribute && code.check.kind !== 'group')
  const missing = own.find((code) => code.check.kind === 'missing')
  const v = context.value(attribute)
  if (v === `''`) return missing ? bitOf(missing) : '0'
  const present = own.flatMap((code) => {
    if (code.check.kind === 'rule') return [`CASE WHEN ${validSql(context, code.check.rule, attribute)} THEN 0 ELSE ${bitOf(code)} END`]
    if (code.check.kind === 'normalised' && context.currency !== null) return [`CASE WHEN ${barePriceSql(context, attribute)} THEN ${bitOf(code)} ELSE 0 END`]
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

/** SQL that is true when the non-blank value of `attribute` follows `rule`. */
function validSql(context: CheckContext, rule: ValueRule, attribute: string): string {
  const { q, currency } = context
  const v = context.value(attribute)
  const matches = (regex: string) => `${v} ~ ${q.escapeLiteral(regex)}`
  switch (rule.kind) {
    case 'max_length':
      // Bytes first: no more bytes than the limit is no more characters, and costs nothing to count.
      return `(octet_length(${v}) <= ${rule.max} OR char_length(${v}) <= ${rule.max})`
    case 'one_of':
      return `${v} IN (${rule.values.map((x) => q.escapeLiteral(x)).join(', ')})`
    case 'url': {
      // Prefixes and byte searches, not a regular expression: a quarter of the time (measured).
      const host = (at: number) => `substr(${v}, ${at}, 1) NOT IN ('', '/', '?', '#')`
      const scheme = `CASE WHEN lower(left(${v}, 8)) = 'https://' THEN ${host(9)} WHEN lower(left(${v}, 7)) = 'http://' THEN ${host(8)} ELSE false END`
      const blanks = [' ', '\\t', '\\n', '\\r', '\\f'].map((c) => `strpos(${v}, E'${c}') = 0`).join(' AND ')
      return `(${scheme} AND ${blanks})`
    }
    case 'price': {
      const code = `split_part(${v}, ' ', 2)`
      const coded = `(${context.parsed(attribute, 'price')} AND ${code} <> '' AND strpos(${q.escapeLiteral(CURRENCIES)}, ${code}) > 0)`
      return currency === null ? coded : `(${coded} OR ${barePriceSql(context, attribute)})`
    }
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

/**
 * SQL: the price `v` is "12.50 EUR" or "12.50" (then its amount and currency are its parts around
 * the space). Text functions rather than a regular expression: each match converts the text to wide
 * characters first, and the expression cost three times these (measured).
 */
function priceShapeSql(v: string): string {
  const amount = `CASE WHEN strpos(${v}, ' ') > 0 THEN left(${v}, -4) ELSE ${v} END`
  const decimal = (a: string) => `(${a} <> '' AND translate(${a}, '0123456789', '') IN ('', '.') AND left(${a}, 1) <> '.' AND right(${a}, 1) <> '.')`
  const code = `translate(right(${v}, 3), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '') = ''`
  const coded = `(octet_length(${v}) > 4 AND substr(${v}, octet_length(${v}) - 3, 1) = ' ' AND ${code})`
  return `(${decimal(amount)} AND (strpos(${v}, ' ') = 0 OR ${coded}))`
}

/** SQL: a price without a currency and with at most two decimals, which a channel currency completes. */
function barePriceSql(context: CheckContext, attribute: string): string {
  const v = context.value(attribute)
  return `(${context.parsed(attribute, 'price')} AND strpos(${v}, ' ') = 0 AND (strpos(${v}, '.') = 0 OR octet_length(${v}) - strpos(${v}, '.') <= 2))`
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
 * SQL: the parsed GTIN `n` (a number, null when not 8, 12, 13 or 14 digits) has the GS1 check digit:
 * its digits weighted 1, 3, 1, … from the right sum to a multiple of 10. Integer arithmetic on the
 * number parsed once: the same on the text cost 8 µs a value (measured), this one.
 */
function gtinSql(n: string): string {
  const digits = Array.from({ length: 14 }, (_, k) => `(${n} / ${(10n ** BigInt(k)).toString()}) % 10 * ${k % 2 === 0 ? 1 : 3}`)
  return `(${n} IS NOT NULL AND (${digits.join(' + ')}) % 10 = 0)`
}

/**
 * A sale price above the price fails; prices that are not both valid, or in different currencies,
 * are the price rules' to report. A bare number has the channel's currency.
 */
function notAboveSql(context: CheckContext, sale: string, price: string): string {
  const { q, currency } = context
  const unit = (attribute: string) => {
    const code = `split_part(${context.value(attribute)}, ' ', 2)`
    return currency === null ? code : `coalesce(nullif(${code}, ''), ${q.escapeLiteral(currency)})`
  }
  const amount = (attribute: string) => `split_part(${context.value(attribute)}, ' ', 1)::numeric`
  const valid = `${context.parsed(sale, 'price')} AND ${context.parsed(price, 'price')} AND ${unit(sale)} = ${unit(price)}`
  return `CASE WHEN ${valid} THEN ${amount(sale)} <= ${amount(price)} ELSE true END`
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
