import { csvRecords } from './csv-source.js'
import { jsonArrayRecords, ndjsonRecords } from './json-source.js'
import { RecordGuard } from './record-guard.js'
import { decompressed } from './source-bytes.js'
import { SourceFormatError, type SourceFormat, type SourceFormatOptions, type SourceLimits, type SourceRecord } from './source-types.js'
import { xmlRecords } from './xml-source.js'

export { SourceFormatError, type SourceFormat, type SourceFormatOptions, type SourceLimits, type SourceRecord } from './source-types.js'

/**
 * The records of a catalog file (fetched from a feed URL or SFTP) as it streams in: product rows,
 * or per-record errors with the line and an excerpt, in file order. Decompresses gzip by its magic
 * bytes (whatever the file name or Content-Type says), then parses as a stream: memory holds one
 * record and the file's attribute names, whatever the file's size. A file that cannot be read as a
 * whole (malformed XML or gzip, a bad CSV header, more than `maxRows` records) throws
 * SourceFormatError; the records before it have been yielded by then.
 */
export function parseSource(
  body: AsyncIterable<Buffer>,
  format: SourceFormat,
  options: SourceFormatOptions,
  limits: SourceLimits,
  /** Called as each piece of the decompressed file is read: throws to stop the reading (a deadline). */
  checkpoint: () => void = () => undefined,
): AsyncGenerator<SourceRecord> {
  const bytes = measured(decompressed(body), limits.maxUnpackedBytes ?? Number.POSITIVE_INFINITY, checkpoint)
  const guard = new RecordGuard(limits)
  switch (format) {
    case 'csv':
    case 'tsv':
      return csvRecords(bytes, format, options, guard)
    case 'xml':
      return xmlRecords(bytes, options, guard)
    case 'ndjson':
      return ndjsonRecords(bytes, guard)
    case 'json':
      return jsonArrayRecords(bytes, guard)
    default:
      // The format comes from a source's settings: a value from before a change of this type.
      throw new SourceFormatError(`unknown source format ${JSON.stringify(format satisfies never)}`)
  }
}

/**
 * The bytes, failing the file once they pass `max` (the decompressed size of a gzip file), and
 * passing each piece's `checkpoint`: a file of nothing but blank lines yields no record for a long
 * time, and is stopped here all the same.
 */
async function* measured(bytes: AsyncIterable<Buffer>, max: number, checkpoint: () => void): AsyncGenerator<Buffer> {
  let seen = 0
  for await (const chunk of bytes) {
    checkpoint()
    seen += chunk.length
    if (seen > max) throw new SourceFormatError(`the file is larger than ${max} bytes once decompressed (SOURCE_MAX_UNPACKED_BYTES)`)
    yield chunk
  }
}
