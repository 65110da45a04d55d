import { stringifyScalars } from '../catalog/row-text.js'
import type { BoundedText } from '../catalog/bounded-text.js'
import { TextLines } from '../catalog/bounded-text.js'
import { JsonElementsReader } from './json-elements-reader.js'
import { setAttribute, type RecordGuard } from './record-guard.js'
import { decodedText } from './source-bytes.js'
import type { SourceRecord } from './source-types.js'

/** The records of an NDJSON file: one JSON object a line; a blank line is no record. */
export async function* ndjsonRecords(bytes: AsyncIterable<Buffer>, guard: RecordGuard): AsyncGenerator<SourceRecord> {
  const lines = new TextLines(guard.maxLineBytes)
  for await (const text of decodedText(bytes)) yield* jsonRecords(lines.push(text), 'line', guard)
  yield* jsonRecords(lines.end(), 'line', guard)
}

/** The records of a JSON file: the objects of its array, or of the array its top-level object holds. */
export async function* jsonArrayRecords(bytes: AsyncIterable<Buffer>, guard: RecordGuard): AsyncGenerator<SourceRecord> {
  const reader = new JsonElementsReader(guard.maxLineBytes)
  for await (const text of decodedText(bytes)) yield* jsonRecords(reader.push(text), 'element', guard)
  reader.end()
}

function* jsonRecords(texts: (BoundedText & { line: number })[], what: 'line' | 'element', guard: RecordGuard): Generator<SourceRecord> {
  for (const item of texts) {
    if ('head' in item) {
      guard.count()
      yield guard.tooLong(item.line, item.head)
    } else if (item.text.trim() !== '') {
      guard.count()
      yield jsonRecord(item.line, item.text, what, guard)
    }
  }
}

function jsonRecord(line: number, text: string, what: 'line' | 'element', guard: RecordGuard): SourceRecord {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return guard.error(line, `the ${what} is not valid JSON: ${(error as Error).message}`, text)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return guard.error(line, `the ${what} is not a JSON object`, text)
  let row: Record<string, string>
  try {
    row = rowOfObject(text, parsed as Record<string, unknown>)
  } catch (error) {
    // A value nested thousands deep: JSON.stringify runs out of stack on it (a few KB do it).
    if (error instanceof RangeError) return guard.error(line, `the ${what} holds a value nested too deeply to keep as text`, text.slice(0, 1000))
    throw error
  }
  return guard.row(line, row, () => text)
}

/**
 * A JSON object as a row of texts. Scalars become text as a stream upload's rows do
 * (stringifyScalars): numbers keep their digits as written (`10.50` stays "10.50"), true is "1",
 * false and null are "". A nested object or array, which a stream's row refuses, is kept here as its
 * JSON text (JSON.stringify: compact, numbers as JavaScript writes them), for a mapping step to pick
 * apart: a catalog's `images: [...]` is data, not a mistake.
 */
function rowOfObject(text: string, parsed: Record<string, unknown>): Record<string, string> {
  let allStrings = true
  for (const name in parsed) {
    if (typeof parsed[name] === 'string') continue
    allStrings = false
    break
  }
  if (allStrings) return parsed as Record<string, string>
  const scalars = JSON.parse(stringifyScalars(text)) as Record<string, unknown>
  const row: Record<string, string> = {}
  for (const name in parsed) {
    const value = parsed[name]
    setAttribute(row, name, typeof value === 'object' && value !== null ? JSON.stringify(value) : (scalars[name] as string))
  }
  return row
}
