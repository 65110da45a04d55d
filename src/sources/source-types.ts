import { UnprocessableError } from '../errors.js'

// The shapes shared by the format readers of a source file (a catalog fetched from a feed URL or
// SFTP). They live apart from source-parsers.ts, which imports every reader, so that a reader and
// the entry point never import each other.

export type SourceFormat = 'csv' | 'tsv' | 'xml' | 'ndjson' | 'json'

export interface SourceFormatOptions {
  /** csv: default ','; tsv: '\t'. */
  delimiter?: string
  /** Default '"'; '' turns quoting off (a TSV whose values hold quotes of their own). */
  quote?: string
  /** Default true: the first record names the attributes; false: columns are named col1, col2… */
  header?: boolean
  /**
   * xml: the element that is one product; default: RSS 2.0 `<item>` or Atom `<entry>`. A name with
   * a prefix (`g:product`) must match as written, one without (`product`) matches any prefix.
   */
  itemElement?: string
  /** The charset the server declared (HTTP Content-Type): a byte order mark or an XML declaration says more. */
  charset?: string
}

export interface SourceLimits {
  /** A record (CSV record, XML item, NDJSON line, JSON element) larger than this is refused alone. */
  maxLineBytes: number
  /** Distinct attribute names over the whole file: a record bringing more is refused alone. */
  maxColumns: number
  /** More records than this fail the whole file. */
  maxRows: number
  /** Bytes of the file once decompressed (a gzip bomb): more fail the whole file. Unset: no bound besides the others. */
  maxUnpackedBytes?: number
  /** Default MAX_ATTRIBUTE_NAME_CHARS (255), what a stream's rows may use. */
  maxAttributeNameLength?: number
}

/** One record of the file: a product row, or the reason it was refused and an excerpt of it. */
export type SourceRecord = { line: number; row: Record<string, string> } | { line: number; error: string; excerpt: string }

/**
 * A file that cannot be read as a whole: malformed XML or gzip, a bad CSV header, too many
 * records. Per-record problems are SourceRecord errors instead, and the rest of the file goes on.
 * An AppError (422), so an interface that parses a source on a client's behalf answers it as is.
 */
export class SourceFormatError extends UnprocessableError {
  constructor(message: string) {
    super(message)
  }
}
