import { sql, type RawBuilder } from 'kysely'
import pg from 'pg'
import { jsonbObject } from '../db/json-object.js'
import type { Channel, ColumnMapping } from '../db/schema.js'
import type { CompiledChecks } from '../templates/template-checks.js'

// The rows an export reads from the import stage (ExportPlan.rows): through the channel's mapping,
// with the bits of the template's checks and the values it rewrites as the file writes them.

const quoter = { escapeLiteral: pg.escapeLiteral, escapeIdentifier: pg.escapeIdentifier }

/** The column of a row of ExportPlan.rows that carries `column`'s value as the file writes it. */
export function writtenColumn(columns: string[], column: string): string {
  return `w${columns.indexOf(column)}`
}

/**
 * The rows with their issues and notes, and the values the template may rewrite as the file writes
 * them. Every value the checks read is read from the stage row once, in a subquery of its own
 * (OFFSET 0 keeps it one), and the mapped object is built from the same values. A mapped constant
 * is read as the constant itself: Postgres then computes its checks once, when it plans.
 */
export function checkedRows({
  channel,
  mapping,
  columns,
  checks,
  where,
}: {
  channel: Channel
  mapping: ColumnMapping[]
  columns: string[]
  checks: CompiledChecks
  where: RawBuilder<unknown>
}): RawBuilder<unknown> {
  const identity = channel.mapping.length === 0
  const valueColumns = identity ? checks.checkedColumns : mapping.map((m) => m.column)
  const values = identity
    ? checks.checkedColumns.map((column, i) => sql`coalesce(data ->> ${column}, '') AS ${sql.raw(`v${i}`)}`)
    : mapping.map((m, i) => sql`${'source' in m ? sql`coalesce(data ->> ${m.source}, '')` : sql`${m.value}::text`} AS ${sql.raw(`v${i}`)}`)
  const constants = new Map(identity ? [] : mapping.flatMap((m) => ('value' in m ? [[m.column, `${quoter.escapeLiteral(m.value)}::text`] as const] : [])))
  const read = (prefix: string) => (column: string) => constants.get(column) ?? `${prefix}.v${valueColumns.indexOf(column)}`
  const rows = sql`SELECT product_id${sql.raw(identity ? ', data' : '')}${sql.raw(values.length > 0 ? ', ' : '')}${sql.join(values, sql`, `)}
    FROM stage_product WHERE ${where} OFFSET 0`
  // Prices and GTINs parsed once, a level above the values they are parsed from.
  const parsed = checks.parsed.map(({ alias, sql: parse }) => `${parse(read('v'))} AS ${alias}`)
  const withParsed = sql`SELECT v.*${sql.raw(parsed.map((p) => `, ${p}`).join(''))} FROM (${rows}) AS v OFFSET 0`
  const data = identity ? sql`s.data` : jsonbObject(mapping.map((m, i) => [sql`${m.column}::text`, sql.raw(`s.v${i}`)]))
  // What is parsed from a constant is a constant too: written in, Postgres computes it once.
  const readParsed = (alias: string) => {
    const parse = checks.parsed.find((p) => p.alias === alias)
    return parse && constants.has(parse.column) ? `(${parse.sql(read('s'))})` : `s.${alias}`
  }
  const bits = (word: 'issues' | 'notes') => sql.raw(checks.bits(word, read('s'), readParsed))
  const written = checks.rewrittenColumns.map((column) => `, ${checks.writtenValue(column, read('s'), readParsed)} AS ${writtenColumn(columns, column)}`)
  return sql`SELECT product_id, ${data} AS data, ${bits('issues')} AS issues, ${bits('notes')} AS notes${sql.raw(written.join(''))}
    FROM (${withParsed}) AS s`
}

/**
 * The mapped row as jsonb. A channel without a mapping exports the stage's rows as they are, which
 * saves rebuilding every row's object (the larger part of rendering it). An explicit mapping always
 * builds its object (every mapped column, '' where the row has none), even one that happens to
 * name every stage column in order: its rows must not change shape when an unrelated column comes
 * or goes, or an export would count rows as modified that were not.
 */
export function rowObject(channel: Channel, mapping: ColumnMapping[]): RawBuilder<unknown> {
  if (channel.mapping.length === 0) return sql`data`
  return jsonbObject(mapping.map((m) => [sql`${m.column}::text`, 'source' in m ? sql`coalesce(data ->> ${m.source}, '')` : sql`${m.value}::text`]))
}
