// The SQL parser's side of the filter (datafusion-sqlparser-rs compiled to WASM, through
// @guanmingchiu/sqlparser-ts): parsing a statement, reading its tree, mapping its positions back to
// the client's text and rephrasing its messages. filter-parse.ts walks the tree into a FilterNode.
import { init, parseWithComments } from '@guanmingchiu/sqlparser-ts'
import { BadRequestError } from '../errors.js'

// The WASM module has to be instantiated once before any parse; doing it at import keeps parseFilter
// synchronous for its callers.
await init()

// The generic dialect is the one that reads both "double-quoted" and `backticked` names as identifiers
// (MySQL reads "x" as a string, Postgres rejects backticks), so no quote is ever rewritten by hand.
const DIALECT = 'generic'

export type Json = Record<string, unknown>
// The parser reads whole statements only, so the condition is wrapped. The parentheses keep a trailing
// ORDER BY / LIMIT / ';' inside the condition, where it is a syntax error; the newline ends a trailing
// `--` comment so it is reported as a comment rather than swallowing the closing parenthesis.
export const PREFIX = 'SELECT 1 WHERE ('
export const SUFFIX = '\n)'

/** Every statement of `text`, with its comments, as the parser's tree. */
export function parseStatements(text: string): ReturnType<typeof parseWithComments> {
  return parseWithComments(text, DIALECT)
}

/** Maps the parser's line/column (in the wrapped text) back to a position in the client's text. */
export class Source {
  private readonly lines: string[][]
  constructor(readonly text: string) {
    // The parser counts columns in characters (code points), not UTF-16 units.
    this.lines = text.split('\n').map((line) => Array.from(line))
  }

  /** 1-based code point offset in the client text, or undefined when the location is in the wrapper. */
  position(line: number, column: number): number | undefined {
    const col = line === 1 ? column - PREFIX.length : column
    if (line < 1 || line > this.lines.length || col < 1) return undefined
    let offset = 0
    for (let i = 0; i < line - 1; i++) offset += (this.lines[i]?.length ?? 0) + 1
    return offset + col
  }

  at(line: number, column: number): string {
    const position = this.position(line, column)
    return position === undefined ? ' at end of filter' : ` at position ${position}`
  }

  charAt(position: number): string {
    return Array.from(this.text)[position - 1] ?? ''
  }
}

// The parser's messages look like "sql parser error: Expected: an expression, found: ) at Line: 1,
// Column: 21"; they are rephrased around the client's own text and positions.
export function parserFailure(error: unknown, source: Source): never {
  const text = error instanceof Error ? error.message : String(error)
  // Anything but a parse error is the WASM module failing (a trap such as "memory access out of
  // bounds"): not the client's fault, and the module may be unusable from here on, so it is a 500.
  if (!text.startsWith('sql parser error: ')) throw new Error(`filter parser failed: ${text}`, { cause: error })
  const raw = text.slice('sql parser error: '.length)
  const location = /\s*at Line: (\d+), Column: (\d+)$/.exec(raw)
  const message = location ? raw.slice(0, location.index) : raw
  const position = location ? source.position(Number(location[1]), Number(location[2])) : undefined
  if (/recursion limit/i.test(message)) fail('nested too deeply')
  const found = /^Expected: (.*), found: (.*)$/s.exec(message)
  if (found) {
    // The client closed the wrapper's parenthesis: `a = 1)`.
    if (position === undefined && found[1] === 'end of statement') fail('syntax error: unbalanced ")"')
    if (position === undefined) fail('syntax error at end of filter')
    const token = found[2] ?? ''
    fail(`syntax error near ${show(token.length > 40 ? `${token.slice(0, 40)}...` : token)} at position ${position}`)
  }
  if (/multi-line comment/i.test(message)) fail(`comments are not supported${position ? ` at position ${position}` : ''}`)
  if (/^Unterminated/i.test(message)) fail(`${message.charAt(0).toLowerCase()}${message.slice(1)}${position ? ` at position ${position}` : ''}`)
  if (position === undefined) fail('syntax error at end of filter')
  return fail(`syntax error near ${show(source.charAt(position))} at position ${position}`)
}

/** Quotes client text for a message, with invisible characters (zero-width space...) made visible. */
export function show(text: string): string {
  return JSON.stringify(text).replace(/[\p{Cc}\p{Cf}\p{Z}]/gu, (c) => {
    const code = c.codePointAt(0) ?? 0
    return c === ' ' ? c : code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}

export function fail(message: string): never {
  throw new BadRequestError(`filter: ${message}`)
}

export function firstStatement(text: string): unknown {
  return parseWithComments(text, DIALECT).statements[0]
}

// The statement without positions and without its condition, to compare with the wrapper's.
export function statementShape(statement: unknown): string {
  return JSON.stringify(statement, (key, value: unknown) => (key === 'span' || key === 'selection' ? undefined : value))
}

// The parser's JSON encodes an enum as {"Variant": payload} or, for a variant without data, "Variant".
export function variant(node: unknown): [string, unknown] {
  if (typeof node === 'string') return [node, undefined]
  if (typeof node === 'object' && node !== null && !Array.isArray(node)) {
    const keys = Object.keys(node)
    if (keys.length === 1 && keys[0] !== undefined) return [keys[0], (node as Json)[keys[0]]]
  }
  return ['', node]
}

export function asObject(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {}
}

export function get(value: unknown, ...keys: string[]): unknown {
  let current: unknown = value
  for (const key of keys) current = asObject(current)[key]
  return current
}

export function firstSpan(node: unknown): { line: number; column: number } | undefined {
  if (typeof node !== 'object' || node === null) return undefined
  if (Array.isArray(node)) {
    for (const item of node) {
      const span = firstSpan(item)
      if (span) return span
    }
    return undefined
  }
  const start = asObject(asObject((node as Json).span).start)
  if (typeof start.line === 'number' && typeof start.column === 'number' && start.line > 0) return { line: start.line, column: start.column }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'span') continue
    const span = firstSpan(value)
    if (span) return span
  }
  return undefined
}
