// Client filter text -> FilterNode. The SQL is read by a real parser (datafusion-sqlparser-rs compiled
// to WASM, through @guanmingchiu/sqlparser-ts); this module only walks the parser's tree and keeps the
// few shapes FilterNode has. Anything else is a BadRequestError that names what was not understood.
import {
  asObject,
  fail,
  firstSpan,
  firstStatement,
  get,
  parserFailure,
  parseStatements,
  PREFIX,
  show,
  Source,
  statementShape,
  SUFFIX,
  variant,
  type Json,
} from './filter-parser-tree.js'
import type { CompareOp, FilterLiteral, FilterNode } from './filter-node.js'
import { EXPRESSION_NAMES, LITERAL_NAMES, OPERATOR_NAMES } from './filter-names.js'

// The WASM parser hands its tree over recursively on a fixed 1 MB stack, and a tree too deep for that
// does not fail cleanly: it overruns memory and leaves the module broken for every later call in the
// process. Measured on 0.62: about 700 levels. Nesting by parentheses, NOT or functions stops at the
// parser's recursion limit (50), but a chain of one operator (1+1+1..., a=1 OR a=1 ...) does not, and
// the densest chain takes two characters a level, so the length is what bounds the depth: at most
// 500 levels here. A test runs the densest chains at this length and checks the parser still works.
export const MAX_FILTER_LENGTH = 1000
// A literal that Postgres' numeric input could not hold (1e999999) would fail the query at run time;
// these bounds keep every accepted number far inside numeric's range.
const MAX_NUMBER_DIGITS = 1000
const NUMBER = /^(\d+\.?\d*|\.\d+)(?:[eE]([-+]?\d+))?$/

const COMPARE: Record<string, CompareOp> = { Eq: '=', NotEq: '<>', Lt: '<', LtEq: '<=', Gt: '>', GtEq: '>=' }
const FLIPPED: Record<CompareOp, CompareOp> = { '=': '=', '<>': '<>', '<': '>', '<=': '>=', '>': '<', '>=': '<=' }

// The wrapper statement with an empty WHERE: a parsed filter must be exactly this plus its condition.
const WRAPPER_SHAPE = statementShape(firstStatement(PREFIX + 'TRUE' + SUFFIX))

/**
 * Parses a filter condition against the stage's columns (matched exactly, whatever the quoting).
 * Blank text is "no filter": an empty AND, which matches every row.
 * @throws BadRequestError naming the first thing that is not understood or not allowed
 */
export function parseFilter(text: string, columns: readonly string[] | typeof ANY_COLUMN): FilterNode {
  if (text.trim() === '') return { kind: 'and', items: [] }
  if (text.length > MAX_FILTER_LENGTH) fail(`longer than ${MAX_FILTER_LENGTH} characters`)
  // Postgres text cannot hold NUL; rejecting it here keeps the query from failing later.
  const nul = text.indexOf('\0')
  if (nul >= 0) fail(`NUL character at position ${nul + 1}`)
  const source = new Source(text)
  let result: { statements: unknown[]; comments: unknown[] }
  try {
    result = parseStatements(PREFIX + text + SUFFIX)
  } catch (error) {
    return parserFailure(error, source)
  }
  const comment = result.comments[0]
  if (comment !== undefined) {
    const c = comment as Json
    fail(`comments are not supported${source.at(Number(c.startLine), Number(c.startColumn))}`)
  }
  if (result.statements.length !== 1) fail('syntax error near ";": only one condition is allowed')
  const statement = result.statements[0]
  const select = get(statement, 'Query', 'body', 'Select')
  if (select === undefined || statementShape(statement) !== WRAPPER_SHAPE) {
    const setOperation = get(statement, 'Query', 'body', 'SetOperation', 'op')
    fail(`only a condition is allowed${typeof setOperation === 'string' ? `, found ${setOperation.toUpperCase()}` : ''}`)
  }
  const [kind, inner] = variant(asObject(select).selection)
  // The condition must be the wrapper's own parenthesis; anything else means the client closed it
  // early and opened another one (`a = 1) OR (b = 2`).
  if (kind === 'Subquery') fail('expected a condition, found a query')
  if (kind !== 'Nested') fail('syntax error: unbalanced parentheses')
  return new Reader(source, columns === ANY_COLUMN ? ANY_COLUMN : new Set(columns)).condition(inner)
}

/**
 * For a filter saved before the columns it may name are known (a channel of a site not imported
 * yet): every other rule holds, and the columns are checked when the filter is used.
 */
export const ANY_COLUMN = Symbol('any column')

class Reader {
  constructor(
    private readonly source: Source,
    private readonly columns: ReadonlySet<string> | typeof ANY_COLUMN,
  ) {}

  condition(node: unknown): FilterNode {
    const [kind, body] = variant(node)
    const b = asObject(body)
    switch (kind) {
      case 'Nested':
        return this.condition(body)
      case 'BinaryOp': {
        const op = variant(b.op)[0]
        if (op === 'And' || op === 'Or') {
          const logic = op === 'And' ? 'and' : 'or'
          // a AND b AND c comes as a left-deep chain; flattening keeps the output (and recursion) flat.
          const items = [b.left, b.right].map((side) => this.condition(side)).flatMap((item) => (item.kind === logic ? item.items : [item]))
          return { kind: logic, items }
        }
        const compare = COMPARE[op]
        if (compare !== undefined) return this.compare(b.left, compare, b.right)
        return this.unsupported(node)
      }
      case 'UnaryOp':
        if (b.op === 'Not') return { kind: 'not', item: this.condition(b.expr) }
        return this.unsupported(node)
      case 'Like': {
        if (b.any === true) this.fail('unsupported LIKE ANY', node)
        if (b.escape_char !== undefined && b.escape_char !== null) this.fail('unsupported LIKE ... ESCAPE (the escape character is \\)', node)
        const column = this.columnOf(b.expr, 'LIKE')
        const pattern = this.operand(b.pattern)
        if (!('literal' in pattern) || pattern.literal.type !== 'string') return this.fail('LIKE needs a string pattern in single quotes', b.pattern)
        // Postgres refuses a pattern ending in its escape character at run time; refuse it here.
        if (/(^|[^\\])(\\\\)*\\$/.test(pattern.literal.value)) this.fail('LIKE pattern must not end with a single \\', b.pattern)
        return { kind: 'like', column, pattern: pattern.literal.value, negated: b.negated === true }
      }
      case 'InList': {
        const column = this.columnOf(b.expr, 'IN')
        const list = Array.isArray(b.list) ? b.list : []
        return { kind: 'in', column, values: list.map((item) => this.literalOf(item, 'IN')), negated: b.negated === true }
      }
      case 'Between': {
        const column = this.columnOf(b.expr, 'BETWEEN')
        const low = this.literalOf(b.low, 'BETWEEN')
        const high = this.literalOf(b.high, 'BETWEEN')
        if (low.type !== high.type) this.fail('BETWEEN bounds must both be strings or both be numbers', b.low)
        return { kind: 'between', column, low, high, negated: b.negated === true }
      }
      case 'IsNull':
      case 'IsNotNull':
        return { kind: 'empty', column: this.columnOf(body, kind === 'IsNull' ? 'IS NULL' : 'IS NOT NULL'), negated: kind === 'IsNotNull' }
      case 'Identifier':
        return this.fail(`expected a condition, found column ${show(String(b.value))}`, node)
      case 'Value':
        return this.fail('expected a condition, found a literal', node)
      default:
        return this.unsupported(node)
    }
  }

  private compare(left: unknown, op: CompareOp, right: unknown): FilterNode {
    const l = this.operand(left)
    const r = this.operand(right)
    if ('column' in l && 'literal' in r) return { kind: 'compare', column: l.column, op, value: r.literal }
    if ('literal' in l && 'column' in r) return { kind: 'compare', column: r.column, op: FLIPPED[op], value: l.literal }
    // Column-to-column comparisons are refused: text or numeric would be a guess, and "x" (an
    // identifier) is most often meant as the string 'x'.
    if ('column' in l && 'column' in r) {
      return this.fail(`cannot compare column ${show(l.column)} with column ${show(r.column)}; strings take single quotes`, right)
    }
    return this.fail('a comparison needs a column on one side', left)
  }

  private columnOf(node: unknown, context: string): string {
    const value = this.operand(node)
    if ('column' in value) return value.column
    return this.fail(`${context} needs a column on its left`, node)
  }

  private literalOf(node: unknown, context: string): FilterLiteral {
    const value = this.operand(node)
    if ('literal' in value) return value.literal
    return this.fail(`${context} accepts only string and number literals, found column ${show(value.column)}`, node)
  }

  private operand(node: unknown): { column: string } | { literal: FilterLiteral } {
    const [kind, body] = variant(node)
    const b = asObject(body)
    switch (kind) {
      case 'Nested':
        return this.operand(body)
      case 'Identifier':
        return { column: this.column(b, node) }
      case 'CompoundIdentifier': {
        const name = (Array.isArray(body) ? body : []).map((part) => String(asObject(part).value)).join('.')
        return this.fail(`unknown column ${show(name)} (quote a name that contains a dot)`, node)
      }
      case 'Value':
        return { literal: this.literal(b, '', node) }
      case 'UnaryOp': {
        // A sign belongs to the number it precedes: -1.5 is one literal, - price is arithmetic.
        const sign = b.op === 'Minus' ? '-' : b.op === 'Plus' ? '' : undefined
        const [innerKind, inner] = variant(b.expr)
        if (sign !== undefined && innerKind === 'Value' && variant(asObject(inner).value)[0] === 'Number') {
          return { literal: this.literal(asObject(inner), sign, node) }
        }
        if (sign !== undefined) return this.fail(`unsupported operator ${sign || '+'}`, node)
        return this.fail('expected a column or a literal', node)
      }
      case 'BinaryOp': {
        const op = variant(b.op)[0]
        if (op === 'And' || op === 'Or' || op in COMPARE) return this.fail('expected a column or a literal, found a condition', node)
        return this.unsupported(node)
      }
      case 'IsNull':
      case 'IsNotNull':
      case 'Like':
      case 'InList':
      case 'Between':
        return this.fail('expected a column or a literal, found a condition', node)
      default:
        return this.unsupported(node)
    }
  }

  private column(ident: Json, node: unknown): string {
    const name = String(ident.value)
    const quote = ident.quote_style
    if (quote !== undefined && quote !== null && quote !== '"' && quote !== '`') this.fail(`unsupported quoting of ${show(name)}`, node)
    // "x" is an identifier in SQL; a client who meant the string 'x' gets told so.
    if (this.columns !== ANY_COLUMN && !this.columns.has(name))
      this.fail(`unknown column ${show(name)}${quote === '"' ? ' (a string takes single quotes)' : ''}`, node)
    return name
  }

  private literal(value: Json, sign: string, node: unknown): FilterLiteral {
    const [kind, body] = variant(value.value)
    if (kind === 'SingleQuotedString' && typeof body === 'string') return { type: 'string', value: body }
    if (kind === 'Number' && Array.isArray(body) && typeof body[0] === 'string' && body[1] === false) {
      const text = body[0]
      const match = NUMBER.exec(text)
      if (match === null) return this.fail(`unsupported number ${text}`, node)
      const exponent = (match[2] ?? '').replace(/^[-+]?0*/, '')
      if (text.length > MAX_NUMBER_DIGITS || exponent.length > 3) this.fail(`number ${text} is out of range`, node)
      return { type: 'number', value: sign + text }
    }
    if (kind === 'Number') return this.fail('unsupported number suffix', node)
    if (kind === 'Placeholder' && typeof body === 'string') return this.fail(`unsupported parameter ${body}`, node)
    if (kind === 'Boolean') return this.fail(`unsupported boolean literal ${body === true ? 'TRUE' : 'FALSE'}`, node)
    return this.fail(`unsupported ${LITERAL_NAMES[kind] ?? 'literal'}`, node)
  }

  private unsupported(node: unknown): never {
    const [kind, body] = variant(node)
    const b = asObject(body)
    if (kind === 'Function') {
      const name = (Array.isArray(b.name) ? b.name : []).map((part) => String(asObject(variant(part)[1]).value)).join('.')
      return this.fail(`unsupported function ${name}`, node)
    }
    if (kind === 'Cast') return this.fail(`unsupported cast${b.kind === 'DoubleColon' ? ' (::)' : ''}`, node)
    if (kind === 'BinaryOp' || kind === 'UnaryOp') {
      const op = variant(b.op)[0]
      return this.fail(`unsupported operator ${OPERATOR_NAMES[op] ?? (kind === 'UnaryOp' ? op.toUpperCase() : '')}`.trimEnd(), node)
    }
    return this.fail(`unsupported ${EXPRESSION_NAMES[kind] ?? 'expression'}`, node)
  }

  private fail(message: string, node: unknown): never {
    const span = firstSpan(node)
    return fail(message + (span ? this.source.at(span.line, span.column) : ''))
  }
}
