// FilterNode -> a Kysely boolean expression. Every literal is a bound parameter and every column is
// whatever the caller's valueOf builds, so no client text ever becomes SQL text here.
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely'
import type { CompareOp, FilterLiteral, FilterNode } from './filter-node.js'
import { numericOrNull } from '../db/number-text.js'

/** Builds a non-null text expression for a column ('' when the row has no such attribute). */
export type FilterValueOf = (column: string) => Expression<string>

// A value is numeric when it reads as a number as a rule reads one (src/db/number-text.ts): every
// numeric test of one that does not is false.

// Whitelisted operator text; FilterNode only ever holds these keys.
const OPERATOR: Record<CompareOp, RawBuilder<unknown>> = {
  '=': sql.raw('='),
  '<>': sql.raw('<>'),
  '<': sql.raw('<'),
  '<=': sql.raw('<='),
  '>': sql.raw('>'),
  '>=': sql.raw('>='),
}

/**
 * Compiles a parsed filter to a condition for `.where(...)`. Every leaf is true or false, never NULL
 * (coalesce(..., false)), so NOT and the negated forms are plain two-valued negations.
 */
export function filterToSql(node: FilterNode, valueOf: FilterValueOf): RawBuilder<SqlBool> {
  switch (node.kind) {
    case 'and':
      if (node.items.length === 0) return sql<SqlBool>`true`
      return sql<SqlBool>`(${sql.join(
        node.items.map((item) => filterToSql(item, valueOf)),
        sql` AND `,
      )})`
    case 'or':
      if (node.items.length === 0) return sql<SqlBool>`false`
      return sql<SqlBool>`(${sql.join(
        node.items.map((item) => filterToSql(item, valueOf)),
        sql` OR `,
      )})`
    case 'not':
      return not(filterToSql(node.item, valueOf))
    case 'compare': {
      // <> is exactly NOT =, like every other negated form: 'abc' <> 10 holds.
      if (node.op === '<>') return not(compare(valueOf(node.column), '=', node.value))
      return compare(valueOf(node.column), node.op, node.value)
    }
    case 'like':
      return negatable(node.negated, leaf(sql`(${valueOf(node.column)}) LIKE ${node.pattern}`))
    case 'in': {
      // Each list item compares with its own type: IN ('a', 10) is = 'a' OR = 10.
      const value = valueOf(node.column)
      const strings = node.values.filter((item) => item.type === 'string').map((item) => sql`${item.value}`)
      const numbers = node.values.filter((item) => item.type === 'number').map((item) => numberParam(item.value))
      const tests = []
      if (strings.length > 0) tests.push(sql`(${value}) IN (${sql.join(strings)})`)
      if (numbers.length > 0) tests.push(sql`${numericOrNull(value)} IN (${sql.join(numbers)})`)
      // parseFilter never makes an empty list, but a node built by hand may: IN () holds for nothing.
      if (tests.length === 0) tests.push(sql`false`)
      return negatable(node.negated, leaf(sql.join(tests, sql` OR `)))
    }
    case 'between': {
      const value = valueOf(node.column)
      const test =
        node.low.type === 'number'
          ? sql`${numericOrNull(value)} BETWEEN ${numberParam(node.low.value)} AND ${numberParam(node.high.value)}`
          : sql`(${value}) COLLATE "C" BETWEEN ${node.low.value} AND ${node.high.value}`
      return negatable(node.negated, leaf(test))
    }
    case 'empty':
      return leaf(node.negated ? sql`(${valueOf(node.column)}) <> ''` : sql`(${valueOf(node.column)}) = ''`)
  }
}

function compare(value: Expression<string>, op: CompareOp, literal: FilterLiteral): RawBuilder<SqlBool> {
  if (literal.type === 'number') return leaf(sql`${numericOrNull(value)} ${OPERATOR[op]} ${numberParam(literal.value)}`)
  // Ordering uses the "C" collation: bytewise, the same on every server whatever its locale.
  // Equality is the same under any deterministic collation, so it stays plain.
  if (op === '=') return leaf(sql`(${value}) = ${literal.value}`)
  return leaf(sql`(${value}) COLLATE "C" ${OPERATOR[op]} ${literal.value}`)
}

// parseFilter bounds number literals, so this cast cannot fail.
function numberParam(value: string): RawBuilder<unknown> {
  return sql`${value}::numeric`
}

function leaf(test: RawBuilder<unknown>): RawBuilder<SqlBool> {
  return sql<SqlBool>`coalesce(${test}, false)`
}

function not(test: RawBuilder<SqlBool>): RawBuilder<SqlBool> {
  return sql<SqlBool>`(NOT ${test})`
}

function negatable(negated: boolean, test: RawBuilder<SqlBool>): RawBuilder<SqlBool> {
  return negated ? not(test) : test
}
