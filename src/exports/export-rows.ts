import { sql, type RawBuilder } from 'kysely'
import { jsonbObject } from '../db/json-object.js'
import type { ColumnMapping } from '../db/schema.js'
import { rulePipeline, writtenDataSql, type RulePipeline } from '../rules/rule-pipeline.js'
import type { RuleSpec } from '../rules/rule-types.js'
import type { CompiledChecks } from '../templates/template-checks.js'
import { quoter } from '../feeds/sql-quoter.js'
import { mappedObjectText } from '../db/referred-data.js'

// The rows an export reads (ExportPlan.rows): the intermediate stage's rows through the channel's
// filter (`source`), mapped, through the channel's rules, with the bits of the template's checks and
// the values it rewrites as the file writes them. Each row also says whether rules changed it
// (`changed`): a channel stage row refers to the import stage's only when nothing did.

/** The column of a row of ExportPlan.rows that carries `column`'s value as the file writes it. */
export function writtenColumn(columns: string[], column: string): string {
  return `w${columns.indexOf(column)}`
}

export interface ChannelRowsInput {
  /** The mapping the export applies: the channel's, or the intermediate stage's columns passed through. */
  mapping: ColumnMapping[]
  /** The channel has no mapping of its own: its rows are the intermediate stage's as they are. */
  identity: boolean
  /** The output columns: the mapping's, then those the channel's rules create. */
  columns: string[]
  checks: CompiledChecks | undefined
  /** The channel's enabled rules, in order. */
  rules: RuleSpec[]
  /** SELECT product_id, data, changed: the intermediate stage's rows the channel's filter keeps. */
  source: RawBuilder<unknown>
  /**
   * A preview's columns of the channel's rules, kept beside each row: `matches`, each rule's m<k>
   * (whether it matched), `rules_rewritten` and `excluded`, with the rows the rules exclude kept;
   * `steps` also each rule's value before and after it (b<k>, a<k>). See ChannelRows.pipeline.
   */
  track?: PreviewTrack
}

export type PreviewTrack = 'matches' | 'steps'

export interface ChannelRows {
  /** SELECT product_id, data, issues, notes, changed and the written values (w0, w1, …). */
  rows: RawBuilder<unknown>
  /** The channel rules' pipeline, when there are rules: with `track`, its steps are columns of `rows` too. */
  pipeline?: RulePipeline
}

/**
 * The rows of a channel. Every value the checks and the rules read is read from the source row
 * once, in a subquery of its own (OFFSET 0 keeps it one): v0, v1, … in the order of the columns
 * they carry; the rules' pipeline then replaces those they write and adds those they create. A
 * mapped constant no rule writes is read as the constant itself: Postgres computes its checks once,
 * when it plans.
 */
export function channelRows(input: ChannelRowsInput): ChannelRows {
  const { mapping, identity, columns, checks, rules } = input
  if (!checks && rules.length === 0) {
    return {
      rows: sql`SELECT product_id, ${rowObject(identity, mapping)} AS data, NULL::bigint AS issues, NULL::bigint AS notes, changed
        FROM (${input.source}) AS stage_product`,
    }
  }
  const values = readValues(input)
  const ruled = rules.length === 0 ? undefined : ruleLevel(input, values)
  const level = ruled?.level ?? values.level
  const valueColumns = ruled?.valueColumns ?? values.valueColumns
  // A preview's columns of the rules, kept beside each row.
  const kept = (ruled?.carried ?? []).map((c) => `, ${c}`).join('')
  const data = identity ? sql`s.data` : jsonbObject(columns.map((column) => [sql`${column}::text`, sql.raw(`s.v${valueColumns.indexOf(column)}`)]))
  if (!checks) {
    return {
      rows: sql`SELECT product_id, ${data} AS data, NULL::bigint AS issues, NULL::bigint AS notes, changed${sql.raw(kept)} FROM (${level}) AS s`,
      pipeline: ruled?.pipeline,
    }
  }
  const constants = new Map(
    identity
      ? []
      : mapping.flatMap((m) =>
          'value' in m && !ruled?.pipeline.written.includes(m.column) ? [[m.column, `${quoter.escapeLiteral(m.value)}::text`] as const] : [],
        ),
  )
  const read = (prefix: string) => (column: string) => constants.get(column) ?? `${prefix}.v${valueColumns.indexOf(column)}`
  // Prices and GTINs parsed once, a level above the values they are parsed from.
  const parsed = checks.parsed.map(({ alias, sql: parse }) => `${parse(read('v'))} AS ${alias}`)
  const withParsed = sql`SELECT v.*${sql.raw(parsed.map((p) => `, ${p}`).join(''))} FROM (${level}) AS v OFFSET 0`
  // What is parsed from a constant is a constant too: written in, Postgres computes it once.
  const readParsed = (alias: string) => {
    const parse = checks.parsed.find((p) => p.alias === alias)
    return parse && constants.has(parse.column) ? `(${parse.sql(read('s'))})` : `s.${alias}`
  }
  const bits = (word: 'issues' | 'notes') => sql.raw(checks.bits(word, read('s'), readParsed))
  const written = checks.rewrittenColumns.map((column) => `, ${checks.writtenValue(column, read('s'), readParsed)} AS ${writtenColumn(columns, column)}`)
  return {
    rows: sql`SELECT product_id, ${data} AS data, ${bits('issues')} AS issues, ${bits('notes')} AS notes, changed${sql.raw(written.join(''))}${sql.raw(kept)}
      FROM (${withParsed}) AS s`,
    pipeline: ruled?.pipeline,
  }
}

interface ValueLevel {
  level: RawBuilder<unknown>
  /** The column each v<i> carries. */
  valueColumns: string[]
}

/** The source's values the checks and rules read, once each: v<i> for valueColumns[i]; data too when something reads it whole. */
function readValues({ mapping, identity, columns, checks, rules, source }: ChannelRowsInput): ValueLevel {
  const mapped = new Map(mapping.map((m) => [m.column, m]))
  const valueColumns = identity ? [...(checks?.checkedColumns ?? [])] : columns.filter((column) => mapped.has(column))
  const sourceOf = (column: string) => {
    const m = mapped.get(column)
    if (identity || !m) return sql`coalesce(data ->> ${column}, '')`
    return 'source' in m ? sql`coalesce(data ->> ${m.source}, '')` : sql`${m.value}::text`
  }
  const values = valueColumns.map((column, i) => sql`${sourceOf(column)} AS ${sql.raw(`v${i}`)}`)
  // A channel rule may read an attribute of the intermediate stage the mapping does not name.
  const keepsData = identity || rules.length > 0
  const level = sql`SELECT product_id, changed${sql.raw(keepsData ? ', data' : '')}${sql.raw(values.length > 0 ? ', ' : '')}${sql.join(values, sql`, `)}
    FROM (${source}) AS stage_product OFFSET 0`
  return { level, valueColumns }
}

/**
 * The channel's rules over the values: a rule reads a mapped column's value (v<i>), or else the
 * intermediate stage's attribute of that name; what the rules write replaces the column's value,
 * what they create follows the mapping's columns; a row they exclude is gone.
 */
function ruleLevel(
  input: ChannelRowsInput,
  values: ValueLevel,
): { level: RawBuilder<unknown>; valueColumns: string[]; pipeline: RulePipeline; carried: string[] } {
  const { identity, columns, rules, track } = input
  const carry = ['product_id', 'changed', 'data', ...values.valueColumns.map((_, i) => `v${i}`)]
  const pipeline = rulePipeline(
    quoter,
    rules,
    {
      rows: values.level,
      carry,
      read: (attribute) => {
        const i = values.valueColumns.indexOf(attribute)
        if (i >= 0) return `s.v${i}`
        return `coalesce(s.data ->> ${quoter.escapeLiteral(attribute)}, '')`
      },
    },
    track === 'steps',
  )
  // Identity: the checked columns and the data with what the rules wrote; a mapping: every output column.
  const valueColumns = identity ? values.valueColumns : columns
  const valueOf = (column: string) => {
    if (pipeline.written.includes(column)) return `p.${pipeline.column(column)}`
    const i = values.valueColumns.indexOf(column)
    return i >= 0 ? `p.v${i}` : `''`
  }
  const list = valueColumns.map((column, i) => `, ${valueOf(column)} AS v${i}`)
  const data = identity ? writtenDataSql(quoter, pipeline, 'p') : 'p.data'
  const steps = pipeline.steps.flatMap((step) => (track === 'steps' ? [step.matched, step.before, step.after] : [step.matched]).filter((c) => c !== `''`))
  const carried = track ? [...steps, 'rules_rewritten', 'excluded'] : []
  const kept = [...steps.map((c) => `, p.${c}`), ', p.rewritten AS rules_rewritten', ', p.excluded']
  const head = `p.product_id, (p.changed OR p.rewritten) AS changed, ${data} AS data${list.join('')}${track ? kept.join('') : ''}`
  const level = sql`SELECT ${sql.raw(head)} FROM (${pipeline.rows}) AS p WHERE ${sql.raw(track ? 'true' : 'NOT p.excluded')} OFFSET 0`
  return { level, valueColumns, pipeline, carried }
}

/**
 * The mapped row as jsonb. A channel without a mapping exports the stage's rows as they are, which
 * saves rebuilding every row's object (the larger part of rendering it). An explicit mapping always
 * builds its object (every mapped column, '' where the row has none), even one that happens to
 * name every stage column in order: its rows must not change shape when an unrelated column comes
 * or goes, or an export would count rows as modified that were not.
 */
function rowObject(identity: boolean, mapping: ColumnMapping[]): RawBuilder<unknown> {
  if (identity) return sql`data`
  // As a referring row's data is made (src/db/referred-data.ts): the same jsonb, by the same SQL.
  return sql.raw(mappedObjectText('data', mapping))
}
