import type { ColumnType, Generated } from 'kysely'
import type { Id, CreatedAt } from './columns.js'

// A site's data sources: streams, feed URLs, SFTP files (src/sites/, src/sources/).

export interface DataSourceTable {
  id: Id
  account_id: string
  site_id: string
  stream_id: string
  import_type: number
  description: Generated<string>
  status: Generated<'active' | 'paused'>
  import_empty: Generated<boolean>
  created_at: CreatedAt
  kind: Generated<SourceKind>
  settings: ColumnType<FetchedSourceSettings | null, string | null, string | null>
  sealed_credentials: string | null
  last_fetch: ColumnType<SourceFetchReport | null, string | null, string | null>
  fetch_state: ColumnType<SourceFetchState | null, string | null, string | null>
}

export type SourceKind = 'stream' | 'feed_url' | 'sftp'

/** How a fetched source's file is read. */
export interface SourceFileFormat {
  format: 'csv' | 'tsv' | 'xml' | 'ndjson' | 'json'
  /** csv, tsv: the separator; default ',' or a tab. */
  delimiter?: string
  /** csv, tsv: the quote character; '' for none. */
  quote?: string
  /** csv, tsv: whether the first record names the columns. */
  header?: boolean
  /** xml: the element that is one product (default: RSS item or Atom entry). */
  item_element?: string
  /** The attribute that is the product's id. */
  id_column: string
}

/** Where a fetched source's file is: a URL, or a path on an SFTP server. Credentials are sealed apart. */
export type FetchedSourceSettings = SourceFileFormat &
  (
    | { kind: 'feed_url'; url: string; basic_user?: string; header_name?: string }
    | { kind: 'sftp'; host: string; port: number; user: string; path: string; host_key_sha256: string }
  )

/** A fetched source's secrets: the basic-auth password or header value; SFTP's password or key. */
export interface SourceCredentials {
  password?: string
  header_value?: string
  private_key?: string
  passphrase?: string
}

/** What tells that a source's file has not changed since the last fetch that read it. */
export interface SourceFetchState {
  etag?: string
  last_modified?: string
  size?: number
  mtime?: number
  sha256?: string
}

/** The last fetch of a source, as the API shows it. */
export interface SourceFetchReport {
  outcome: 'imported' | 'unchanged' | 'failed'
  pid: string
  started_at: string
  duration_ms: number
  /** Bytes fetched (as sent: compressed when the file was). */
  bytes: number | null
  /** The batch the fetch made of the file, when it read one. */
  batch_id: string | null
  products: number | null
  refused_rows: number | null
  /** Refused records grouped by message, with the first line numbers of each. */
  errors: SourceRowError[]
  error: string | null
}

export interface SourceRowError {
  message: string
  occurrences: number
  lines: number[]
  example: string
}
