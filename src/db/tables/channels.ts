import type { ColumnType, Generated } from 'kysely'
import type { Id } from './columns.js'

// Channels, their rules, destinations, exports and pushes (src/channels/, src/rules/, src/exports/).

export type FeedFormat = 'csv' | 'tsv' | 'ndjson' | 'xml'

/** What a channel's last export found checking its rows against its template (site_stage.checks). */
export interface CheckTotals {
  /** Rows in the channel stage: every product through the channel's filter. */
  checked: number
  /** Rows in the feed. */
  exported: number
  /** Rows left out of the feed: they failed a required rule in mode exclude. */
  leftOut: number
  /** Rows with at least one error, at least one warning. */
  withErrors: number
  withWarnings: number
  /** Rows in the feed with at least one error (mode warn_only) or warning. */
  exportedWithWarnings: number
  /** Rows failing each code, for the codes any row fails. */
  codes: Record<string, number>
  /** The template whose codes the rows' bits are (the channel's template may have changed since). */
  template?: string
}

/** What an export does with a product that fails a required rule of its channel's template. */
export type ValidationMode = 'exclude' | 'warn_only'

/** Why a safety stop held an export: its file would drop too far below the delivered one, or its template would leave out too much. */
export type HoldReason = 'drop' | 'left_out'

/** An export a safety stop held (channel.hold): what it would have published, and what it was made from. */
export interface ChannelHold {
  pid: string
  reason: HoldReason
  /** Says why, with the figures, as the run's message and the site error do. */
  message: string
  /** When the export started (its files' names) and when it was held, ISO 8601. */
  export_start: string
  held_at: string
  /** Products the held file would hold; the delivered file holds (null before any delivered file). */
  products: number
  products_previous: number | null
  /** Products the template checked and would leave out. */
  products_checked: number
  products_left_out: number
  /** The stop's setting that was passed, and the channel's safety_min_products then. */
  threshold: number
  min_products: number
  /** The import stage's build and the plan's signature it was computed from: a release needs both unchanged. */
  build: string
  signature: string
}

/** A file of one kind of change; `skipped` lists the products the channel's checks left out. */
export type DeltaType = 'new' | 'modified' | 'unchanged' | 'deleted' | 'skipped'

export type ColumnMapping = { column: string; source: string } | { column: string; value: string }

export interface ChannelFilename {
  type: DeltaType | null
  filename: string
}

export interface ExportTemplateTable {
  id: Id
  account_id: string
  name: string
}

export interface ChannelTable {
  id: Id
  account_id: string
  site_id: string
  template_id: string
  name: string
  active: Generated<boolean>
  format: FeedFormat
  mapping: ColumnType<ColumnMapping[], string, string>
  filter: Generated<string>
  filenames: ColumnType<ChannelFilename[], string, string>
  /** The built-in template the channel's export_name picked when it was saved (template-catalog.ts). */
  template: Generated<string>
  validation_mode: Generated<ValidationMode>
  /** ISO 4217 code a bare-number price gets, where the template's channel reads both forms. */
  currency: string | null
  /** The readiness score (0 to 1) whose crossing fires channel.readiness_changed; null: none. */
  readiness_threshold: ColumnType<string | null, number | string | null | undefined, number | string | null>
  /** Safety stops (src/exports/safety-stop.ts): the share of the delivered feed an export may drop; null: off. */
  safety_max_drop: ColumnType<string | null, number | string | null | undefined, number | string | null>
  /** The share of the checked products an export may leave out; null: off. */
  safety_max_left_out: ColumnType<string | null, number | string | null | undefined, number | string | null>
  /** The size of a baseline below which neither stop applies; null: none (0). */
  safety_min_products: ColumnType<number | null, number | null | undefined, number | null>
  /** The export a safety stop held, until it is released or a later export passes; null: none. */
  hold: ColumnType<ChannelHold | null, string | null | undefined, string | null>
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

/** A transformation rule of a site (channel_id null) or of one of its channels (src/rules/). */
export interface RuleTable {
  id: Id
  account_id: string
  site_id: string
  channel_id: string | null
  position: number
  enabled: Generated<boolean>
  description: Generated<string>
  attribute: string | null
  condition: ColumnType<unknown, string | null, string | null>
  then_actions: ColumnType<unknown, string, string>
  else_actions: ColumnType<unknown, string, string>
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export type DestinationKind = 'feed' | 'http' | 'sftp' | 'ftps'

/** Where an SFTP or FTPS destination delivers (migration 0019); its credentials are sealed apart. */
export interface FileServerSettings {
  host: string
  port: number
  user: string
  /** The remote directory the files go to ('' for the login directory). */
  directory: string
  /** SFTP: the server's host key, `SHA256:<base64>` as ssh-keygen -l prints it. */
  host_key_sha256?: string
  /** FTPS: plain FTP, without TLS, only when the destination says so. */
  insecure?: boolean
  /** FTPS: the server's TLS certificate pinned, `AB:CD:…` (its SHA-256 as openssl prints it); unset: the system's authorities. */
  tls_certificate_sha256?: string
  /** Upload under a temporary name, then rename into place (false for servers without rename). */
  temp_rename: boolean
}

/** The secrets of a file server login, stored sealed (src/auth/credential-box.ts) in `sealed_credentials`. */
export interface FileCredentials {
  password?: string
  private_key?: string
  passphrase?: string
}

export interface ChannelDestinationTable {
  id: Id
  account_id: string
  channel_id: string
  kind: DestinationKind
  name: string | null
  active: Generated<boolean>
  url: string | null
  token: string | null
  settings: ColumnType<FileServerSettings | null, string | null, string | null>
  sealed_credentials: string | null
}

export interface PushAttemptTable {
  id: Id
  account_id: string
  push_id: string
  channel_id: string
  attempt: number
  started_at: Date
  duration_ms: number
  bytes: number | null
  remote_path: string | null
  outcome: 'delivered' | 'failed' | 'retrying'
  error: string | null
}

export interface ChannelExportTable {
  id: Id
  account_id: string
  site_id: string
  channel_id: string
  pid: string
  export_start: Date
  export_time: Date
  process_status: string
  product_count: ColumnType<string, string | number, string | number>
  product_count_now: ColumnType<string, string | number, string | number>
  product_count_previous: ColumnType<string, string | number, string | number>
  product_count_new: ColumnType<string, string | number, string | number>
  product_count_modified: ColumnType<string, string | number, string | number>
  product_count_deleted: ColumnType<string, string | number, string | number>
  product_count_unchanged: ColumnType<string, string | number, string | number>
  product_count_skipped: ColumnType<string, string | number, string | number>
  uploaded: Generated<number>
}

/** A push is `pending` until it ended, also while a claim holds it under its lease (`locked_until`). */
export type ChannelPushStatus = 'pending' | 'done' | 'failed' | 'skipped'

export interface ChannelPushTable {
  id: Id
  account_id: string
  site_id: string
  channel_id: string
  export_id: string
  pid: string
  url: string
  storage_key: string
  filename: string
  content_type: string
  destination_id: string | null
  kind: Generated<DestinationKind>
  status: Generated<ChannelPushStatus>
  attempts: Generated<number>
  /** Not before: the back-off of a retry. */
  next_attempt_at: Generated<Date>
  locked_until: Date | null
  budget_ends_at: Date | null
  note: string | null
  created_at: Generated<Date>
  finished_at: Date | null
}
