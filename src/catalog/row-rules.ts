// Product row rules of the stream interface (SPEC.md "Product row rules" and section 7): one NDJSON
// line in, either a row (product id + a flat JSON object whose values are all strings) or the exact
// error message the specification names.

/**
 * Distinct attribute names one batch may bring. The batch keeps them in first-seen order (its column
 * list); without a cap, a new name in every row would grow that list, and the time and memory of
 * the upload and its import, with no bound.
 */
export const MAX_BATCH_ATTRIBUTES = 10_000

export const RowError = {
  emptyAttributes: 'Empty Product Attributes',
  emptyLine: 'Empty Payload line',
  missingId: 'Missing "id" attribute',
  tooLarge: 'Product payload is too large',
  controlCharacter: 'Control character error, possibly incorrectly encoded',
  syntax: 'Syntax error',
  notAnObject: 'Product row must be a JSON object',
  nested: 'Nested objects and arrays are not supported; flatten or concatenate the value',
  tooManyAttributes: `Too many attribute names: one upload may use at most ${MAX_BATCH_ATTRIBUTES.toLocaleString('en-US')} distinct names; split the upload or use fewer names`,
} as const

export const MAX_LINE_BYTES = 2_097_152

/** Whether a line of `bytes` bytes is too large; the \r of a CRLF line ending is not part of the line. */
export function exceedsLineLimit(bytes: number, endsWithCarriageReturn: boolean): boolean {
  return bytes - (endsWithCarriageReturn ? 1 : 0) > MAX_LINE_BYTES
}

// `\u0000`, or a `\uD800`..`\uDFFF` escape (paired or not; the decoded text decides).
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/

/** NUL or an unpaired surrogate: Postgres stores neither in text or jsonb. */
export function hasUnstorableCharacter(value: string): boolean {
  return value.includes('\0') || /\p{Cs}/u.test(value)
}

function isUnstorableString(value: unknown): boolean {
  return typeof value === 'string' && hasUnstorableCharacter(value)
}

/**
 * Adds a row's attribute names to the batch's names in first-seen order, unless that would pass
 * MAX_BATCH_ATTRIBUTES: then nothing is added and the row is refused (false).
 */
export function addAttributeNames(seen: Set<string>, attributes: Record<string, unknown>): boolean {
  let added = 0
  for (const key in attributes) if (!seen.has(key)) added++
  if (added === 0) return true
  if (seen.size + added > MAX_BATCH_ATTRIBUTES) return false
  for (const key in attributes) seen.add(key)
  return true
}

export type RowResult = { productId: string; data: string; attributes: Record<string, unknown> } | { error: string }

/** Validates one line (already known to be valid UTF-8 and at most MAX_LINE_BYTES long). */
export function readRow(line: string): RowResult {
  const text = line.trim()
  if (text === '') return { error: RowError.emptyLine }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return { error: syntaxErrorMessage(error) }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { error: RowError.notAnObject }
  const row = parsed as Record<string, unknown>
  let allEmpty = true
  let allStrings = true
  for (const key in row) {
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
  if (allStrings) return { productId: id as string, data: text, attributes: row }
  const data = stringifyScalars(text)
  if (typeof id === 'string') return { productId: id, data, attributes: row }
  if (id === true) return { productId: '1', data, attributes: row }
  // A numeric id keeps its digits as written, which only the rewritten text still has.
  return { productId: (JSON.parse(data) as Record<string, string>).id ?? '', data, attributes: row }
}

// V8 names an unterminated string or a raw control character inside one; the reference service
// reports both as the control-character error, and every other parse failure as a syntax error.
function syntaxErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : ''
  return /Unterminated string|Bad control character|Bad escaped character/i.test(message) ? RowError.controlCharacter : RowError.syntax
}

/**
 * Rewrites the scalar tokens of valid, flat JSON as strings: numbers keep the digits as written
 * (`10.50` stays "10.50", which JSON.parse would turn into 10.5), true becomes "1", false and
 * null become "". Strings are copied untouched. The input has already passed JSON.parse.
 */
export function stringifyScalars(json: string): string {
  let out = ''
  let copiedUpTo = 0
  let i = 0
  const length = json.length
  while (i < length) {
    const c = json.charCodeAt(i)
    if (c === 34 /* " */) {
      // Jump to the closing quote natively; a quote preceded by an odd run of backslashes is escaped.
      let close = json.indexOf('"', i + 1)
      while (close !== -1 && isEscaped(json, close)) close = json.indexOf('"', close + 1)
      i = close === -1 ? length : close + 1
      continue
    }
    let replacement: string | undefined
    let end = i
    if (c === 116 /* t */) {
      replacement = '"1"'
      end = i + 4
    } else if (c === 102 /* f */) {
      replacement = '""'
      end = i + 5
    } else if (c === 110 /* n */) {
      replacement = '""'
      end = i + 4
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      while (end < length && isNumberChar(json.charCodeAt(end))) end++
      replacement = `"${json.slice(i, end)}"`
    }
    if (replacement === undefined) {
      i++
      continue
    }
    out += json.slice(copiedUpTo, i) + replacement
    copiedUpTo = end
    i = end
  }
  return out + json.slice(copiedUpTo)
}

function isEscaped(text: string, quote: number): boolean {
  let backslashes = 0
  for (let k = quote - 1; text.charCodeAt(k) === 92; k--) backslashes++
  return backslashes % 2 === 1
}

function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69
}
