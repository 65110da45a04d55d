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
  /** SQL: the row's issues as a bigint of bits (null when none), from the jsonb expression `raw` (the mapped row). */
  issues(raw: string): string
  /** SQL: the row as exported, from `raw`: bare prices with the channel's currency added, when it normalises any. */
  exported(raw: string): string
  /** The bits of the codes of severity `error`: a row with one of them is left out in mode exclude. */
  errorMask: bigint
  warningMask: bigint
}

const NUMBER = '[0-9]+(\\.[0-9]+)?'
const BARE_PRICE = '^[0-9]+(\\.[0-9]{1,2})?$'
const PRICE = `^${NUMBER} (${ISO_4217_CODES.join('|')})$`
const ISO_DATE_TIME = '[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2})?(Z|[+-][0-9]{2}:?[0-9]{2})?)?'

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
  const valueOf = (raw: string, attribute: string) => {
    const column = columnOf.get(attribute)
    return column === undefined ? `''` : `coalesce((${raw})->>${q.escapeLiteral(column)}, '')`
  }
  const currency = template.normalisesBarePrices && settings.currency ? settings.currency : null
  const conditions = (raw: string) =>
    codes.map((code) => ({ code, failed: failedSql(q, code, (attribute) => valueOf(raw, attribute), currency) })).filter(({ failed }) => failed !== null)
  const mask = (severity: string) => codes.filter((c) => c.severity === severity).reduce((bits, c) => bits | (1n << BigInt(c.bit)), 0n)
  return {
    codes,
    issues(raw) {
      const parts = conditions(raw).map(({ code, failed }) => `CASE WHEN ${failed} THEN ${(1n << BigInt(code.bit)).toString()}::bigint ELSE 0 END`)
      return parts.length === 0 ? 'NULL::bigint' : `nullif(${parts.join(' + ')}, 0)`
    },
    exported(raw) {
      if (currency === null) return raw
      const prices = codes.filter((c) => c.check.kind === 'normalised' && columnOf.has(c.attribute))
      if (prices.length === 0) return raw
      const pairs = prices.map(({ attribute }) => {
        const column = q.escapeLiteral(columnOf.get(attribute) ?? attribute)
        const value = `(${raw})->>${column}`
        const withCurrency = `round((${value})::numeric, 2)::text || ${q.escapeLiteral(` ${currency}`)}`
        return `${column}, CASE WHEN ${value} ~ ${q.escapeLiteral(BARE_PRICE)} THEN ${withCurrency} ELSE ${value} END`
      })
      // Keys absent from the row stay absent: || adds the price only where the row has one.
      return `(${raw}) || jsonb_strip_nulls(jsonb_build_object(${pairs.join(', ')}))`
    },
    errorMask: mask('error'),
    warningMask: mask('warning'),
  }
}

/** SQL that is true when the row fails `code`, or null when it can never fail (the attribute has no column). */
function failedSql(q: SqlQuoter, code: CheckCode, value: (attribute: string) => string, currency: string | null): string | null {
  const v = value(code.attribute)
  switch (code.check.kind) {
    case 'missing':
      return `btrim(${v}) = ''`
    case 'normalised':
      if (currency === null || v === `''`) return null
      return `${v} ~ ${q.escapeLiteral(BARE_PRICE)}`
    case 'group':
      return groupFailedSql(q, code.check.rule, value)
    case 'rule':
      if (v === `''`) return null
      return `(${v} <> '' AND NOT (${validSql(q, code.check.rule, v, value, currency)}))`
  }
}

function groupFailedSql(q: SqlQuoter, rule: GroupRule, value: (attribute: string) => string): string {
  const empty = (attribute: string) => `btrim(${value(attribute)}) = ''`
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
      return `char_length(${v}) <= ${rule.max}`
    case 'one_of':
      return `${v} IN (${rule.values.map((x) => q.escapeLiteral(x)).join(', ')})`
    case 'url':
      return `${v} ~* ${q.escapeLiteral('^https?://[^\\s/?#]+([/?#]\\S*)?$')}`
    case 'price':
      return currency === null ? matches(PRICE) : `(${matches(PRICE)} OR ${matches(BARE_PRICE)})`
    case 'not_above':
      return notAboveSql(q, v, value(rule.attribute), currency)
    case 'gtin':
      return `catalog_gtin_valid(${v})`
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

/**
 * A sale price above the price fails; prices that are not both valid, or in different currencies,
 * are the price rules' to report. A bare number has the channel's currency.
 */
function notAboveSql(q: SqlQuoter, sale: string, price: string, currency: string | null): string {
  const amount = (v: string) => `substring(${v} from '^[0-9]+(?:\\.[0-9]+)?')::numeric`
  const unit = (v: string) =>
    currency === null ? `substring(${v} from ' ([A-Z]{3})$')` : `coalesce(substring(${v} from ' ([A-Z]{3})$'), ${q.escapeLiteral(currency)})`
  const shape = currency === null ? PRICE : `(${PRICE.slice(1, -1)})|(${BARE_PRICE.slice(1, -1)})`
  const valid = (v: string) => `${v} ~ ${q.escapeLiteral(currency === null ? shape : `^(${shape})$`)}`
  return `CASE WHEN ${valid(sale)} AND ${valid(price)} AND ${unit(sale)} = ${unit(price)} THEN ${amount(sale)} <= ${amount(price)} ELSE true END`
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
