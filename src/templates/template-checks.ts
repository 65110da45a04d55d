import type { SqlQuoter } from '../feeds/feed-sql.js'
import { checkCodes, type CheckCode } from './template-codes.js'
import type { ChannelTemplate, GroupRule } from './template-types.js'
import { barePriceSql, blankSql, priceShapeSql, validSql, type CheckContext, type ParsedKind } from './value-rule-sql.js'

// A template's checks as SQL over one row's values, so that checking runs inside the export's own
// statements, row by row, beside the rendering of the line: no row leaves Postgres to be checked.
// Each check is a CASE adding its bit. The caller reads each checked value once, and the prices and
// GTINs parsed from them once, in subqueries of their own (export-plan.ts): every check reads them.

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

/** The attributes a check reads. */
function attributesOf(code: CheckCode): string[] {
  if (code.check.kind === 'group') {
    const { all = [], any = [], unless } = code.check.rule
    return [code.attribute, ...all, ...any, ...(unless ? [unless.attribute] : [])]
  }
  if (code.check.kind === 'rule' && code.check.rule.kind === 'not_above') return [code.attribute, code.check.rule.attribute]
  return [code.attribute]
}
