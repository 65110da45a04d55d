import type { SqlQuoter } from '../feeds/sql-quoter.js'
import { isRewriting, spellingOf, type RewritingRule, type Spelling } from './spelling-sql.js'
import { checkCodes, type CheckCode, type CodeWord, type RewriteKind } from './template-codes.js'
import type { ChannelTemplate, Condition, GroupRule } from './template-types.js'
import { blankSql, gtinSql, validSql, type CheckContext, type ParsedKind } from './value-rule-sql.js'

// A template's checks as SQL over one row's values, so that checking runs inside the export's own
// statements, row by row, beside the rendering of the line: no row leaves Postgres to be checked.
// Each check is a CASE adding its bit. The caller reads each checked value once, and what is parsed
// from them (a value in the channel's spelling, a GTIN as a number) once, in subqueries of their
// own (export-plan.ts): every check reads them.

/** How a channel applies its template. */
export interface TemplateSettings {
  /** ISO 4217 code of the channel: bare-number prices get it, amounts are in it; null: none. */
  currency: string | null
}

/** A template compiled for one channel's columns. */
export interface CompiledChecks {
  codes: CheckCode[]
  /** The output columns whose values the checks read. */
  checkedColumns: string[]
  /**
   * Values parsed once per row from the checked columns before the checks read them (a value in
   * the channel's spelling, a GTIN as a number): each `alias` is `sql(read)`, selected beside them.
   */
  parsed: { alias: string; column: string; sql(read: (column: string) => string): string }[]
  /**
   * SQL: the bits of one word of the row's checks as a bigint (null when none): `issues`, what it
   * fails; `notes`, what the file carries rewritten. `read` gives the SQL of a checked column's
   * value as text ('' when the row has none), `readParsed` of a parsed alias: both read once per
   * row by the caller, since the checks read them again and again (measured: a jsonb lookup or a
   * regular expression each time cost more than all the checks).
   */
  bits(word: CodeWord, read: (column: string) => string, readParsed: (alias: string) => string): string
  /** The output columns whose values the feed writes rewritten where they are written another way than the channel's. */
  rewrittenColumns: string[]
  /**
   * SQL: the value of `column` (one of rewrittenColumns) as the feed writes it, read as `bits`
   * reads: in the channel's spelling where it has one, as it is otherwise. The stage keeps the
   * value as mapped; the line carries it rewritten (the row's notes say which values were).
   */
  writtenValue(column: string, read: (column: string) => string, readParsed: (alias: string) => string): string
  /** The bits of the codes of severity `error` (in issues): a row with one of them is left out in mode exclude. */
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

/** The one rule of an attribute whose values have other spellings, if any. */
function rewritingRuleOf(template: ChannelTemplate, attribute: string): RewritingRule | undefined {
  const rules = (template.attributes.find((a) => a.name === attribute)?.rules ?? []).filter(isRewriting)
  if (rules.length > 1) throw new Error(`${template.name}.${attribute} has more than one rule that rewrites its values`)
  return rules[0]
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
  const currency = settings.currency ?? template.defaultCurrency ?? null
  const spellings = new Map(
    template.attributes.flatMap((a) => {
      const rule = rewritingRuleOf(template, a.name)
      return rule && columnOf.has(a.name) ? [[a.name, spellingOf(q, rule, currency)] as const] : []
    }),
  )
  const parsed = parsedValues(template, columnOf, spellings)
  const mask = (severity: string) => codes.filter((c) => c.severity === severity).reduce((bits, c) => bits | bitValue(c), 0n)
  return {
    codes,
    checkedColumns: [...checked].map((attribute) => columnOf.get(attribute) ?? attribute),
    parsed: parsed.map(({ alias, column, sql }) => ({ alias, column, sql })),
    bits(word, read, readParsed) {
      const value = (attribute: string) => valueOf(read, attribute)
      const parsedOf = (attribute: string, kind: ParsedKind) => {
        const found = parsed.find((p) => p.attribute === attribute && p.kind === kind)
        return found ? readParsed(found.alias) : 'NULL'
      }
      const context: CheckContext = { q, value, parsed: parsedOf, currency }
      const ofWord = codes.filter((code) => code.word === word)
      const parts = [
        ...template.attributes.map((attribute) => attributeBitsSql(context, ofWord, attribute.name)),
        ...ofWord.flatMap((code) =>
          code.check.kind === 'group' ? [`CASE WHEN ${groupFailedSql(context, code.check.rule)} THEN ${bitOf(code)} ELSE 0 END`] : [],
        ),
      ].filter((part) => part !== '0')
      return parts.length === 0 ? 'NULL::bigint' : `nullif(${parts.join(' + ')}, 0)`
    },
    rewrittenColumns: [...spellings.keys()].map((attribute) => columnOf.get(attribute) ?? attribute),
    writtenValue(column, read, readParsed) {
      const attribute = [...columnOf].find(([, c]) => c === column)?.[0] ?? column
      const found = parsed.find((p) => p.attribute === attribute && p.kind === 'canonical')
      // A value that is no spelling of a valid one is written as it is (its check reports it).
      return found ? `coalesce(${readParsed(found.alias)}, ${read(column)})` : read(column)
    },
    errorMask: mask('error'),
    warningMask: mask('warning'),
  }
}

function bitValue(code: CheckCode): bigint {
  return 1n << BigInt(code.bit)
}

function bitOf(code: CheckCode): string {
  return `${bitValue(code).toString()}::bigint`
}

/** The values parsed once per row: every value with other spellings in its channel's spelling, every GTIN (as a number). */
function parsedValues(template: ChannelTemplate, columnOf: Map<string, string>, spellings: Map<string, Spelling>) {
  const wanted: { attribute: string; kind: ParsedKind }[] = []
  for (const attribute of template.attributes) {
    if (!columnOf.has(attribute.name)) continue
    if (spellings.has(attribute.name)) wanted.push({ attribute: attribute.name, kind: 'canonical' })
    if ((attribute.rules ?? []).some((rule) => rule.kind === 'gtin')) wanted.push({ attribute: attribute.name, kind: 'gtin' })
  }
  return wanted.map(({ attribute, kind }, i) => {
    const column = columnOf.get(attribute) ?? attribute
    const alias = `parsed_${i}`
    const spelling = spellings.get(attribute)
    const sql = (read: (column: string) => string) => (kind === 'gtin' || !spelling ? gtinsSql(read(column)) : spelling.canonical(read(column)))
    return { alias, attribute, column, kind, sql }
  })
}

/**
 * SQL: the GTIN of `v` as a number (14 digits fit a bigint), or null. Google ignores spaces and
 * dashes in one (`400-6381-333931`) and takes up to ten separated by commas: a list is its first
 * GTIN when every one is a GTIN with its check digit (gtinSql), else null.
 */
function gtinsSql(v: string): string {
  const digits = (c: string) => `octet_length(${c}) IN (8, 12, 13, 14) AND translate(${c}, '0123456789', '') = ''`
  const single = (c: string) => `CASE WHEN ${digits(c)} THEN ${c}::bigint END`
  const cleaned = (c: string) => `translate(${c}, E' -\\t\\u00a0', '')`
  const list = `(SELECT CASE WHEN count(*) BETWEEN 1 AND ${MAX_GTINS} AND count(*) = count(g) AND bool_and(${gtinSql('g')}) THEN min(g) END
    FROM (SELECT ${single(cleaned('e'))} AS g FROM unnest(string_to_array(${v}, ',')) AS e WHERE ${cleaned('e')} <> '') AS x)`
  // A GTIN as written (most rows) is read as it is; blanks and dashes taken out once, in a subselect.
  const spaced = `(SELECT ${single('c')} FROM (SELECT ${cleaned(v)} AS c) AS x)`
  return `CASE WHEN ${digits(v)} THEN ${v}::bigint WHEN strpos(${v}, ',') = 0 THEN ${spaced} ELSE ${list} END`
}

const MAX_GTINS = 10

/**
 * SQL: the bits of one attribute's own checks of one word (its presence, its rules, its rewrites),
 * or '0' when none can be set. Whether the value is blank is asked once: a blank value is the
 * presence check's to report, not every rule's.
 */
function attributeBitsSql(context: CheckContext, codes: CheckCode[], attribute: string): string {
  const own = codes.filter((code) => code.attribute === attribute && code.check.kind !== 'group')
  const missing = own.find((code) => code.check.kind === 'missing')
  const v = context.value(attribute)
  const missingBits = missing ? missingSql(context, missing) : '0'
  if (v === `''`) return missingBits
  const rewrites = own.filter((code) => code.check.kind === 'rewrite')
  if (rewrites.length > 0) return rewriteBitsSql(context, rewrites, attribute)
  const present = own.flatMap((code) =>
    code.check.kind === 'rule' ? [`CASE WHEN ${validSql(context, code.check.rule, attribute)} THEN 0 ELSE ${bitOf(code)} END`] : [],
  )
  if (missingBits === '0' && present.length === 0) return '0'
  return `CASE WHEN ${blankSql(v)} THEN ${missingBits} ELSE ${present.length === 0 ? '0' : present.join(' + ')} END`
}

/** SQL: the missing bit of an attribute, unless another attribute's value says the product has none to give. */
function missingSql(context: CheckContext, missing: CheckCode): string {
  const unless = missing.check.kind === 'missing' ? missing.check.unless : undefined
  return unless ? `CASE WHEN ${holdsSql(context, unless)} THEN 0 ELSE ${bitOf(missing)} END` : bitOf(missing)
}

/**
 * SQL: the bit of the way the attribute's value was rewritten into the channel's spelling, or 0.
 * A blank value is no spelling of a valid one (its written form is NULL): no need to ask whether it
 * is blank. Whether a price or amount as sent named a currency is asked only of one rewritten.
 */
function rewriteBitsSql(context: CheckContext, rewrites: CheckCode[], attribute: string): string {
  const v = context.value(attribute)
  const bit = (kind: RewriteKind) => {
    const code = rewrites.find((c) => c.check.kind === 'rewrite' && c.check.rewrite === kind)
    return code ? bitOf(code) : '0'
  }
  const named = `${v} ~ '[A-Za-z€£]'`
  const rule = rewrites[0]?.check.kind === 'rewrite' ? rewrites[0].check.rule.kind : undefined
  const which =
    rule === 'price'
      ? `CASE WHEN ${named} THEN ${bit('spelling')} ELSE ${bit('currency_added')} END`
      : rule === 'amount'
        ? `CASE WHEN ${named} THEN ${bit('currency_removed')} ELSE ${bit('spelling')} END`
        : bit('spelling')
  return `CASE WHEN ${context.parsed(attribute, 'canonical')} <> ${v} THEN ${which} ELSE 0 END`
}

/** SQL: the attribute of `condition` holds one of its values, as the file writes it (a spelling of one). */
function holdsSql(context: CheckContext, condition: Condition): string {
  const parsed = context.parsed(condition.attribute, 'canonical')
  const written = parsed === 'NULL' ? context.value(condition.attribute) : parsed
  return `coalesce(${written} IN (${condition.values.map((v) => context.q.escapeLiteral(v)).join(', ')}), false)`
}

function groupFailedSql(context: CheckContext, rule: GroupRule): string {
  const empty = (attribute: string) => blankSql(context.value(attribute))
  const failures: string[] = []
  for (const attribute of rule.all ?? []) failures.push(empty(attribute))
  if (rule.any && rule.any.length > 0) failures.push(`(${rule.any.map(empty).join(' AND ')})`)
  const failed = failures.length === 0 ? 'false' : `(${failures.join(' OR ')})`
  const applies = rule.when ? ` AND ${holdsSql(context, rule.when)}` : ''
  const exempt = rule.unless ? ` AND NOT ${holdsSql(context, rule.unless)}` : ''
  return `(${failed}${applies}${exempt})`
}

/** The attributes a check reads. */
function attributesOf(code: CheckCode): string[] {
  const conditions = (...found: (Condition | undefined)[]) => found.flatMap((c) => (c ? [c.attribute] : []))
  switch (code.check.kind) {
    case 'group': {
      const { all = [], any = [], unless, when } = code.check.rule
      return [code.attribute, ...all, ...any, ...conditions(unless, when)]
    }
    case 'missing':
      return [code.attribute, ...conditions(code.check.unless)]
    case 'rule':
      return code.check.rule.kind === 'not_above' ? [code.attribute, code.check.rule.attribute] : [code.attribute]
    case 'rewrite':
      return [code.attribute]
  }
}
