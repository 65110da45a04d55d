import { pipeline, Readable } from 'node:stream'
import { CsvError, Parser } from 'csv-parse'
import { excerpt } from '../input/text-input.js'
import { HEAD_CHARS } from '../catalog/bounded-text.js'
import { setAttribute, type RecordGuard } from './record-guard.js'
import { utf8Bytes } from './source-bytes.js'
import { SourceFormatError, type SourceFormatOptions, type SourceRecord } from './source-types.js'

// csv-parse holds one record in memory until its end. A record past maxLineBytes is refused alone,
// but csv-parse cannot skip one and go on: this bound, a few times the record limit, is where it
// stops, in practice at a quote that is never closed and takes the rest of the file along.
const HARD_BOUND_FACTOR = 4

interface CsvLine {
  values: string[]
  /** The file line where the record starts (1-based, the header line counted). */
  line: number
}

/**
 * csv-parse's streaming parser, handing on each record with the line it starts on. Lines are counted
 * here as each record is pushed, not read from csv-parse: its count takes a CRLF inside a quoted
 * value for two lines, and its `info` option copies its whole state for every record (half again
 * the parse time). Counted at the push, the count is also right when a later record fails and the
 * records read ahead of the consumer are dropped with the stream.
 */
class LinedParser extends Parser {
  nextLine = 1

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) return super.push(null)
    const values = chunk as string[]
    const record: CsvLine = { values, line: this.nextLine }
    // Empty lines are records too (skip_empty_lines is off): a record starts right after the one before.
    this.nextLine += 1 + lineBreaksIn(values)
    return super.push(record, encoding)
  }
}

/** Line breaks inside a record's values: only a quoted value holds one, as it was written. */
function lineBreaksIn(values: string[]): number {
  let count = 0
  for (const value of values) {
    for (let at = value.indexOf('\n'); at !== -1; at = value.indexOf('\n', at + 1)) count++
  }
  return count
}

/** The records of a CSV or TSV file, the first one naming the attributes unless `header` is false. */
export async function* csvRecords(
  bytes: AsyncIterable<Buffer>,
  format: 'csv' | 'tsv',
  options: SourceFormatOptions,
  guard: RecordGuard,
): AsyncGenerator<SourceRecord> {
  const delimiter = options.delimiter ?? (format === 'tsv' ? '\t' : ',')
  const parser = csvParser(delimiter, options.quote ?? '"', guard)
  pipeline(Readable.from(utf8Bytes(bytes, options.charset)), parser, () => undefined)
  let columns: string[] | undefined
  try {
    for await (const { values, line } of parser as AsyncIterable<CsvLine>) {
      if (values.length === 1 && values[0]!.trim() === '') continue
      if (columns === undefined) {
        if (/^\s*<(!doctype\s+html|html)[\s>]/i.test(values.join(delimiter))) {
          throw new SourceFormatError(`the file is an HTML page (a sign-in or error page?), not ${format === 'tsv' ? 'a TSV' : 'a CSV'} file`)
        }
        columns = options.header === false ? numberedColumns(values.length, guard) : headerColumns(values, guard)
        if (options.header !== false) continue
      }
      guard.count()
      yield csvRecord(line, values, columns, delimiter, guard)
    }
  } catch (error) {
    throw csvFileError(error, parser.nextLine, guard)
  }
}

function csvParser(delimiter: string, quote: string, guard: RecordGuard): LinedParser {
  if (delimiter === '' || /[\r\n]/.test(delimiter) || delimiter === quote) {
    throw new SourceFormatError(`the CSV delimiter ${JSON.stringify(delimiter)} cannot be used (with the quote ${JSON.stringify(quote)})`)
  }
  try {
    return linedParser(delimiter, quote, guard)
  } catch (error) {
    // Options csv-parse refuses (a quote of several characters, say) are the source's settings.
    throw error instanceof CsvError ? new SourceFormatError(`the CSV settings cannot be used: ${error.message}`) : error
  }
}

function linedParser(delimiter: string, quote: string, guard: RecordGuard): LinedParser {
  return new LinedParser({
    bom: true,
    delimiter,
    quote: quote === '' ? false : quote,
    // Any line ending, in any mix: a file assembled from several exports has several. The longest
    // first: csv-parse takes the first that matches. `\r\r\n` is what a CSV written in text mode on
    // Windows ends its lines with; a lone `\r` is an old Mac's.
    record_delimiter: ['\r\r\n', '\r\n', '\n', '\r'],
    // Ragged records are reported one by one below, not as an error of the file.
    relax_column_count: true,
    // A quote inside an unquoted value (`15" monitor`) is kept as written, as spreadsheets do.
    relax_quotes: true,
    // Empty lines come through as records, so that the line count stays exact; they are skipped above.
    skip_empty_lines: false,
    max_record_size: HARD_BOUND_FACTOR * guard.maxLineBytes,
  })
}

/** The trimmed names of the header record: each column needs one of its own. */
function headerColumns(values: string[], guard: RecordGuard): string[] {
  const names = values.map((value) => value.trim())
  const seen = new Map<string, number>()
  names.forEach((name, index) => {
    if (name === '') throw new SourceFormatError(`column ${index + 1} of the header has no name`)
    const first = seen.get(name)
    if (first !== undefined) throw new SourceFormatError(`column ${index + 1} of the header repeats the name "${excerpt(name)}" of column ${first}`)
    seen.set(name, index + 1)
  })
  checkColumns(names, guard)
  return names
}

function numberedColumns(count: number, guard: RecordGuard): string[] {
  const names = Array.from({ length: count }, (_, index) => `col${index + 1}`)
  checkColumns(names, guard)
  return names
}

/** Every record of a CSV file has all the header's names: one past a limit would refuse them all. */
function checkColumns(names: string[], guard: RecordGuard): void {
  if (names.length > guard.maxColumns) throw new SourceFormatError(`the header has ${names.length} columns, more than ${guard.maxColumns}`)
  names.forEach((name, index) => {
    if ([...name].length > guard.maxNameLength) {
      throw new SourceFormatError(`the name of column ${index + 1} ("${excerpt(name)}") is longer than ${guard.maxNameLength} characters`)
    }
  })
  guard.knownNames(names)
}

function csvRecord(line: number, values: string[], columns: string[], delimiter: string, guard: RecordGuard): SourceRecord {
  if (values.length !== columns.length) {
    return guard.error(line, `the record has ${values.length} fields, the header has ${columns.length}`, values.join(delimiter))
  }
  if (exceedsRecordBytes(values, delimiter.length, guard.maxLineBytes)) return guard.tooLong(line, headOf(values, delimiter))
  const row: Record<string, string> = {}
  for (let index = 0; index < columns.length; index++) setAttribute(row, columns[index]!, values[index]!)
  return { line, row }
}

/** The start of a long record, for its excerpt, without joining all of it. */
function headOf(values: string[], delimiter: string): string {
  let head = ''
  for (const value of values) {
    head += (head === '' ? '' : delimiter) + value.slice(0, HEAD_CHARS)
    if (head.length >= HEAD_CHARS) break
  }
  return head
}

/** A record's size: the UTF-8 bytes of its values and delimiters (not its quotes or line break). */
function exceedsRecordBytes(values: string[], delimiterLength: number, max: number): boolean {
  let units = (values.length - 1) * delimiterLength
  for (const value of values) units += value.length
  // A UTF-16 unit is at least one UTF-8 byte and at most three.
  if (units > max) return true
  if (units * 3 <= max) return false
  let bytes = (values.length - 1) * delimiterLength
  for (const value of values) bytes += Buffer.byteLength(value)
  return bytes > max
}

/** csv-parse's errors as errors of the file, at the line where the failing record starts. */
function csvFileError(error: unknown, line: number, guard: RecordGuard): unknown {
  if (!(error instanceof CsvError)) return error
  if (error.code === 'CSV_MAX_RECORD_SIZE') {
    const bound = HARD_BOUND_FACTOR * guard.maxLineBytes
    return new SourceFormatError(`the record starting at line ${line} grows past ${bound} bytes: is a quote never closed?`)
  }
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') return new SourceFormatError(`the record starting at line ${line} opens a quote that is never closed`)
  return new SourceFormatError(`the CSV cannot be read at line ${line}: ${error.message}`)
}
