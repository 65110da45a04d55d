import { hasUnstorableCharacter } from '../input/text-input.js'
import { namesInTextOrder, stringifyScalars } from './row-text.js'

// Product row rules of the stream interface (docs/interface.md "Product row rules" and section 7): one NDJSON
// line in, either a row (product id + a flat JSON object whose values are all strings) or the exact
// error message the specification names.

export const RowError = {
  emptyAttributes: 'Empty Product Attributes',
  emptyLine: 'Empty Payload line',
  missingId: 'Missing "id" attribute',
  tooLarge: 'Product payload is too large',
  controlCharacter: 'Control character error, possibly incorrectly encoded',
  syntax: 'Syntax error',
  notAnObject: 'Product row must be a JSON object',
  nested: 'Nested objects and arrays are not supported; flatten or concatenate the value',
  longAttributeName: 'Attribute name too long: at most 255 characters',
  longId: 'Product id too long: at most 1,000 bytes',
} as const

// A product id is a key of the stream's and the stages' indexes, whose entries Postgres caps at
// 2,704 bytes: a longer id would fail every later import of the stream. 1,000 bytes is also what
// a product id path segment (DELETE /streams/{id}/products/{productId}) may be.
export const MAX_PRODUCT_ID_BYTES = 1000

/** The longest attribute name a row may bring (the length of the platform's other names). */
export const MAX_ATTRIBUTE_NAME_CHARS = 255

/** The row error of a row that would bring its stream past `limit` distinct attribute names. */
export function tooManyAttributesError(limit: number): string {
  return (
    `Too many attribute names: a stream may use at most ${limit.toLocaleString('en-US')} distinct names over all its uploads ` +
    `(MAX_ATTRIBUTES_PER_STREAM); use fewer names, or delete every row (?all=true) and upload again to start a new set`
  )
}

export const MAX_LINE_BYTES = 2_097_152

/** Whether a line of `bytes` bytes is too large; the \r of a CRLF line ending is not part of the line. */
export function exceedsLineLimit(bytes: number, endsWithCarriageReturn: boolean): boolean {
  return bytes - (endsWithCarriageReturn ? 1 : 0) > MAX_LINE_BYTES
}

// `\u0000`, or a `\uD800`..`\uDFFF` escape (paired or not; the decoded text decides).
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/

function isUnstorableString(value: unknown): boolean {
  return typeof value === 'string' && hasUnstorableCharacter(value)
}

/**
 * The attribute names of one batch, checked against the names its stream already uses. A stream's
 * names become the columns of every stage built from it, and every product read and export walks
 * them all: without a cap, a new name in every row (a few bytes each) grows that work with no bound.
 * A row that would bring the stream past `limit` distinct names is refused; rows using names
 * already known are still kept.
 */
export class AttributeNames {
  /** The batch's names in first-seen order: its column list. */
  readonly names = new Set<string>()
  /** Names of this batch that the stream did not have yet. */
  private added = 0

  constructor(
    private readonly known: ReadonlySet<string>,
    readonly limit: number,
  ) {}

  /**
   * Adds a row's names; returns the row error instead, adding nothing, when a new name is longer
   * than MAX_ATTRIBUTE_NAME_CHARS or the names would pass the stream's limit.
   */
  add(attributes: RowAttributes): string | undefined {
    const ordered = attributes instanceof OrderedNames ? attributes.names : undefined
    if (ordered === undefined) {
      // Most rows of a batch use only names it has seen already: one look each, nothing to add.
      let allSeen = true
      for (const key in attributes) {
        if (this.names.has(key)) continue
        allSeen = false
        break
      }
      if (allSeen) return undefined
    }
    const keys = ordered ?? Object.keys(attributes)
    let unseen = 0
    let fresh = 0
    for (const key of keys) {
      if (this.names.has(key)) continue
      unseen++
      if (this.known.has(key)) continue
      // Every row of every feed file repeats the names: a long one multiplies each file's size.
      if (key.length > MAX_ATTRIBUTE_NAME_CHARS && [...key].length > MAX_ATTRIBUTE_NAME_CHARS) return RowError.longAttributeName
      fresh++
    }
    if (unseen === 0) return undefined
    if (fresh > 0 && this.known.size + this.added + fresh > this.limit) return tooManyAttributesError(this.limit)
    this.added += fresh
    for (const key of keys) this.names.add(key)
    return undefined
  }
}

/**
 * The names of a row that has integer-like ones ("2024"), in the order of its text: a JS object
 * lists those first, whatever their place, and the first-seen column order would follow it.
 */
export class OrderedNames {
  constructor(readonly names: readonly string[]) {}
}

/** A row's attributes as parsed, or, when the parsed object would reorder them, their names in order. */
export type RowAttributes = Record<string, unknown> | OrderedNames

export type RowResult = { productId: string; data: string; attributes: RowAttributes } | { error: string }

/** Validates one line (already known to be valid UTF-8 and at most MAX_LINE_BYTES long). */
export function readRow(line: string): RowResult {
  const text = line.trim()
  if (text === '') return { error: RowError.emptyLine }
  let parsed: unknown
  // A failed parse costs V8 an exception with a captured stack (~7 µs, 30 times a good row); the
  // message is all that is read, so no stack is captured.
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return { error: syntaxErrorMessage(error) }
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { error: RowError.notAnObject }
  const row = parsed as Record<string, unknown>
  let allEmpty = true
  let allStrings = true
  let reordered: boolean | undefined
  for (const key in row) {
    // Integer-like names come first in an object's key order, so the first key tells.
    reordered ??= isArrayIndex(key)
    const value = row[key]
    if (typeof value === 'string') {
      if (value !== '') allEmpty = false
    } else if (typeof value === 'object' && value !== null) {
      return { error: RowError.nested }
    } else {
      allStrings = false
      if (value === true || typeof value === 'number') allEmpty = false
    }
  }
  if (allEmpty) return { error: RowError.emptyAttributes }
  const id = row.id
  if (id === undefined || id === null || id === '' || id === false) return { error: RowError.missingId }
  // Postgres text and jsonb cannot hold NUL, and jsonb refuses an unpaired surrogate; the reference
  // service treats both as encoding errors. Valid UTF-8 cannot encode either: only an escape can.
  if (UNSTORABLE_ESCAPE.test(text) && Object.entries(row).some(([k, v]) => hasUnstorableCharacter(k) || isUnstorableString(v))) {
    return { error: RowError.controlCharacter }
  }
  // Three bytes at most per UTF-16 unit: only an id longer than a third of the limit is measured.
  if (typeof id === 'string' && id.length > MAX_PRODUCT_ID_BYTES / 3 && Buffer.byteLength(id) > MAX_PRODUCT_ID_BYTES) return { error: RowError.longId }
  const attributes = reordered === true ? new OrderedNames(namesInTextOrder(text)) : row
  if (allStrings) return { productId: id as string, data: text, attributes }
  const data = stringifyScalars(text)
  if (typeof id === 'string') return { productId: id, data, attributes }
  if (id === true) return { productId: '1', data, attributes }
  // A numeric id keeps its digits as written, which only the rewritten text still has.
  const productId = (JSON.parse(data) as Record<string, string>).id ?? ''
  if (Buffer.byteLength(productId) > MAX_PRODUCT_ID_BYTES) return { error: RowError.longId }
  return { productId, data, attributes }
}

/** Whether a property name is an array index, which objects list before their other names. */
function isArrayIndex(key: string): boolean {
  const first = key.charCodeAt(0)
  return first >= 48 && first <= 57 && /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 4294967295
}

// Refused short lines remembered per upload, and how many: a body that repeats a few bad lines
// millions of times (a few KB gzipped) then costs a lookup per line instead of a failed parse each.
const REMEMBERED_LINE_CHARS = 256
const REMEMBERED_LINES = 10_000

/** readRow for one upload or payload, with the verdicts on short refused lines remembered. */
export class RowReader {
  private readonly refused = new Map<string, string>()

  read(line: string): RowResult {
    const short = line.length <= REMEMBERED_LINE_CHARS
    if (short && this.refused.size > 0) {
      const error = this.refused.get(line)
      if (error !== undefined) return { error }
    }
    const row = readRow(line)
    if (short && 'error' in row && this.refused.size < REMEMBERED_LINES) this.refused.set(line, row.error)
    return row
  }
}

// V8 names an unterminated string or a raw control character inside one; the reference service
// reports both as the control-character error, and every other parse failure as a syntax error.
function syntaxErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : ''
  return /Unterminated string|Bad control character|Bad escaped character/i.test(message) ? RowError.controlCharacter : RowError.syntax
}
