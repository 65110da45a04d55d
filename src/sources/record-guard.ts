import { MAX_ATTRIBUTE_NAME_CHARS } from '../catalog/row-rules.js'
import { excerpt } from '../input/text-input.js'
import { exampleValue } from '../streams/upload-stage.js'
import { SourceFormatError, type SourceLimits, type SourceRecord } from './source-types.js'

/**
 * The limits of one file, applied to its records as they pass. It keeps the attribute names seen
 * (at most `maxColumns`) and a count, nothing per row, so memory stays flat whatever the file's size.
 */
export class RecordGuard {
  readonly maxLineBytes: number
  readonly maxColumns: number
  readonly maxNameLength: number
  private readonly maxRows: number
  private readonly names = new Set<string>()
  private records = 0

  constructor(limits: SourceLimits) {
    for (const [name, value] of Object.entries(limits)) {
      // The limits come from the platform's configuration, never from the file: a bad one is a bug.
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) throw new RangeError(`source limit ${name} must be a positive integer`)
    }
    this.maxLineBytes = limits.maxLineBytes
    this.maxColumns = limits.maxColumns
    this.maxRows = limits.maxRows
    this.maxNameLength = limits.maxAttributeNameLength ?? MAX_ATTRIBUTE_NAME_CHARS
  }

  /** Counts one record (a row or a refused one): past `maxRows` the whole file fails. */
  count(): void {
    if (++this.records > this.maxRows) throw new SourceFormatError(`the file has more than ${this.maxRows} products`)
  }

  /** The record of a row, or of its refusal when it brings a bad attribute name or one too many. */
  row(line: number, row: Record<string, string>, text: () => string): SourceRecord {
    const refused = this.addNames(row)
    return refused === undefined ? { line, row } : this.error(line, refused, text())
  }

  /** Names every record will have (a CSV header), checked by the caller: rows then skip the check. */
  knownNames(names: Iterable<string>): void {
    for (const name of names) this.names.add(name)
  }

  error(line: number, error: string, text: string): SourceRecord {
    return { line, error, excerpt: exampleValue(text) }
  }

  /** XML items are measured in characters (their bytes are not tracked), a close lower bound. */
  tooLong(line: number, head: string, unit: 'bytes' | 'characters' = 'bytes'): SourceRecord {
    return this.error(line, `the record is longer than ${this.maxLineBytes} ${unit}`, head)
  }

  /**
   * Adds a row's names to the file's; returns why the row is refused instead, adding nothing. Like
   * a stream's MAX_ATTRIBUTES_PER_STREAM: rows using names already seen are still kept.
   */
  private addNames(row: Record<string, string>): string | undefined {
    let fresh = 0
    for (const name in row) {
      if (this.names.has(name)) continue
      if (name === '') return 'an attribute name is empty'
      if (name.length > this.maxNameLength && [...name].length > this.maxNameLength)
        return `the attribute name "${excerpt(name)}" is longer than ${this.maxNameLength} characters`
      fresh++
    }
    if (fresh === 0) return undefined
    if (this.names.size + fresh > this.maxColumns) {
      return `the record would bring the file past ${this.maxColumns} distinct attribute names; rows with names already used are kept`
    }
    for (const name in row) this.names.add(name)
    return undefined
  }
}

/** Sets an attribute, `__proto__` included: assigned, that name would set the row's prototype instead. */
export function setAttribute(row: Record<string, string>, name: string, value: string): void {
  if (name === '__proto__') Object.defineProperty(row, name, { value, enumerable: true, writable: true, configurable: true })
  else row[name] = value
}
