import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

// bigint columns come back from pg as strings, which is also how the interfaces show ids.
type Id = ColumnType<string, never, never>
type CreatedAt = ColumnType<Date, Date | undefined, never>

export interface AccountTable {
  id: Id
  name: string
  created_at: CreatedAt
}

export interface PlatformCredentialTable {
  id: Id
  account_id: string
  client_id: string
  secret_hash: string
  created_at: CreatedAt
  rotated_at: Date | null
}

export interface AccessTokenTable {
  id: Id
  account_id: string
  name: string
  /** The public id of a token issued as `cpat_<public_id>_<secret>`; null for older tokens (`cpat_<secret>`). */
  public_id: ColumnType<string | null, string | null | undefined, never>
  token_hash: string
  created_at: CreatedAt
  revoked_at: Date | null
}

export interface ProjectTable {
  id: Id
  account_id: string
  name: string
  created_at: CreatedAt
}

export type SiteStatus = 'active' | 'paused_upload' | 'disabled'

export interface SiteTable {
  id: Id
  account_id: string
  project_id: string
  title: string
  status: Generated<SiteStatus>
  import_schedule: Generated<string>
  id_column: Generated<string>
  processing_status: Generated<'Running' | 'Done'>
  created_at: CreatedAt
  updated_at: Generated<Date>
}

export interface SiteTagTable {
  id: Id
  account_id: string
  site_id: string
  key: string
  value: string
  readonly: Generated<boolean>
  is_reference: Generated<boolean>
  created_at: CreatedAt
}

export type StreamType = 'chunked' | 'referenced'
export type StreamStatus = 'active' | 'disabled' | 'locked' | 'locked_upload' | 'locked_processing'

export interface StreamTable {
  id: Id
  account_id: string
  name: string
  type: StreamType
  status: Generated<StreamStatus>
  content_type: string | null
  created_at: Date
  updated_at: Date
  deleted_at: Date | null
  columns: Generated<string[]>
  applied_seq: Generated<string>
  /** The stream of a fetched source (feed URL, SFTP): no interface shows it, only its source writes to it. */
  source_owned: Generated<boolean>
}

/** `replace`: a fetched source's file, whole; rows not in it are deleted. */
export type BatchKind = 'upsert' | 'delete' | 'delete_all' | 'replace'
export type BatchStatus = 'uploaded' | 'processed' | 'failed'

export interface StageError {
  message: string
  occurrences: number
  example: { lineNumber: number; value: string }
}

export interface BatchStage {
  completedAt: string
  status: 'success' | 'warning' | 'failure'
  successCount: number
  errorCount: number
  errors: StageError[]
}

export interface BatchTable {
  id: string
  seq: Generated<string>
  account_id: string
  stream_id: string
  kind: BatchKind
  status: BatchStatus
  content_type: string | null
  upload_stage: ColumnType<BatchStage, string, string>
  processing_stage: ColumnType<BatchStage | null, string | null, string | null>
  error_count: Generated<number>
  row_count: Generated<number>
  columns: Generated<string[]>
  created_at: Date
  applied_at: Date | null
  rows_released: Generated<boolean>
}

export interface SitePurgeTable {
  site_id: string
  deleted_at: Generated<Date>
}

export interface BatchRowTable {
  batch_id: string
  line_no: number
  account_id: string
  product_id: string
  data: string | null
}

export interface BatchPayloadTable {
  batch_id: string
  chunk_no: number
  account_id: string
  chunk: Buffer
}

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

/** How a fetched source's file is read (issue 34). */
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

export interface StreamProductTable {
  stream_id: string
  product_id: string
  account_id: string
  data: ColumnType<Record<string, string> | null, string | null, string | null>
  changed_seq: string
}

export interface StageProductTable {
  site_id: string
  stage: string
  stage_id: string
  product_id: string
  account_id: string
  /**
   * The row's attributes. Null in a channel stage row that refers to the import stage's row of the
   * same id (a clean row of a channel without a mapping: src/imports/exported-data.ts).
   */
  data: ColumnType<Record<string, string> | null, string | null, string | null>
  /** A channel stage row's feed line as rendered; null in the import stage, and for a row its template's checks leave out. */
  line: ColumnType<string | null, string | null | undefined, string | null>
  /** A channel stage row's failed checks, a bit per error or warning code of its template; null when none (and in the import stage). */
  issues: ColumnType<string | null, string | null | undefined, string | null>
  /** A channel stage row's rewrites into the channel's spelling, a bit per info code of its template; null when none. */
  notes: ColumnType<string | null, string | null | undefined, string | null>
}

/** Request counters of every process (PostgresRateLimitStore). */
export interface RateLimitWindowTable {
  key: string
  window_start: string
  window_end: Generated<string>
  hits: number
}

/** A feed file kept in Postgres (PostgresFeedStorage). */
export interface FeedObjectTable {
  id: Generated<string>
  key: string
  account_id: string | null
  state: Generated<'writing' | 'stored'>
  identity_bytes: string | null
  gzip_bytes: string | null
  created_at: CreatedAt
  removed_at: Date | null
}

/** One chunk of a stored feed file's gzip representation. */
export interface FeedChunkTable {
  object_id: string
  seq: number
  data: Buffer
}

/** The ids an incremental build of a site's import stage touched, by build. */
export interface StageChangeTable {
  site_id: string
  build: string
  product_id: string
}

export interface SiteStageTable {
  site_id: string
  stage: string
  stage_id: string
  account_id: string
  columns: string[]
  row_count: ColumnType<string, string | number, string | number>
  recipe: string
  stream_seqs: ColumnType<Record<string, string>, string, string>
  /** Import stage: this build's number. Channel stage: the import build it was exported from. */
  build: ColumnType<string, string | number | undefined, string | number>
  /** Import stage: stage_change holds every id touched by the builds after this one. */
  changes_from: ColumnType<string, string | number | undefined, string | number>
  /** Channel stage: what its rows and lines were made with (filter, mapping, columns, format). */
  signature: ColumnType<string | null, string | null | undefined, string | null>
  /** Channel stage: the bytes of its lines, a newline each. */
  line_bytes: ColumnType<string, string | number | undefined, string | number>
  /** Channel stage: the counts of its rows' checks (CheckTotals); null before the first export with templates. */
  checks: ColumnType<CheckTotals | null, string | null | undefined, string | null>
  /** Channel stage: its clean rows refer to the import stage's rows instead of keeping a copy of their data. */
  refers_to_import: Generated<boolean>
  updated_at: Generated<Date>
}

export type RunAction = 'import' | 'export' | 'channel' | 'export-all' | 'all'
export type RunStatus = 'queued' | 'running' | 'success' | 'failed'

/** A run of a site (import, export…). Its id keeps the name pid: the id's name on the wire and in every table that records a run's work. */
export interface RunTable {
  pid: string
  account_id: string
  site_id: string
  action: RunAction
  target_id: string | null
  trigger: 'api' | 'schedule'
  status: RunStatus
  message: Generated<string>
  job_id: string | null
  attempt: Generated<number>
  heartbeat_at: Date | null
  created_at: Generated<Date>
  started_at: Date | null
  finished_at: Date | null
}

export interface ImportHistoryTable {
  id: Id
  account_id: string
  site_id: string
  pid: string
  product_count: ColumnType<string, string | number, never>
  import_time: Date
}

export type SiteErrorType = 'Error' | 'Warning' | 'Info'
export type SiteErrorClassification = 'low' | 'medium' | 'high'

export interface SiteErrorTable {
  id: Id
  account_id: string
  site_id: string
  pid: string
  error: number
  type: SiteErrorType
  classification: SiteErrorClassification
  message: string
  data: ColumnType<Record<string, unknown>, string, never>
  created_at: Generated<Date>
}

export interface SiteScheduleTable {
  site_id: string
  account_id: string
  schedule: string
  next_run_at: Date | null
}

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

export interface FeedFileTable {
  id: Id
  account_id: string
  channel_id: string
  position: number
  filename: string
  storage_key: string
  content_type: string
  bytes: ColumnType<string, string | number, string | number>
  etag: string
  written_at: Date
  /** A full file not written yet: written from the channel stage's lines on its first download. */
  pending: Generated<boolean>
  /** The site whose channel stage a pending file is written from. */
  site_id: ColumnType<string | null, string | null | undefined, string | null>
  header: Generated<string>
  footer: Generated<string>
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

export type ChannelPushStatus = 'pending' | 'running' | 'done' | 'failed' | 'skipped'

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
  run_at: Generated<Date>
  locked_until: Date | null
  budget_ends_at: Date | null
  note: string | null
  created_at: Generated<Date>
  finished_at: Date | null
}

/** An account's subscription to events (issue 15). */
export interface WebhookTable {
  id: Id
  account_id: string
  url: string
  /** Event types, or the one entry `all`. */
  events: string[]
  active: Generated<boolean>
  description: Generated<string>
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: Date | null
  consecutive_failures: Generated<number>
  failing_since: Date | null
  disabled_reason: string | null
  disabled_at: Date | null
  created_at: CreatedAt
  updated_at: Generated<Date>
}

/** The outbox of events; the id is the `webhook-id` header. */
export interface WebhookEventTable {
  id: string
  account_id: string
  type: string
  payload: ColumnType<Record<string, unknown>, string, never>
  created_at: CreatedAt
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One event to one subscription. */
export interface WebhookDeliveryTable {
  id: Id
  account_id: string
  webhook_id: string
  event_id: string
  status: Generated<WebhookDeliveryStatus>
  attempts: Generated<number>
  next_attempt_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  retry_until: Date | null
  locked_until: Date | null
  last_attempt_at: Date | null
  last_response_code: number | null
  last_error: string | null
  response_body: string | null
  created_at: CreatedAt
  finished_at: Date | null
}

export interface ConsoleSessionTable {
  id_hash: string
  account_id: string | null
  operator: boolean
  credential_id: string
  csrf_token: string
  created_at: Date
  expires_at: Date
}

export interface ConsoleKeyTable {
  id: number
  secret: string
}

export interface ActivityTable {
  id: Generated<string>
  account_id: string
  occurred_at: Date
  actor_type: string
  actor_id: string
  actor_label: string
  action: string
  target_type: string
  target_id: string
  site_id: string | null
  changes: ColumnType<Record<string, unknown>, string, never>
  request_id: string | null
  request_address: string | null
  request_user_agent: string | null
  idempotency_key: string | null
}

export interface IdempotencyKeyTable {
  account_id: string
  key: string
  fingerprint: string
  claim: string
  state: 'running' | 'done'
  created_at: Date
  lease_until: Date
  status: number | null
  headers: ColumnType<Record<string, string> | null, string | null, string | null>
  body: string | null
}

export interface Database {
  account: AccountTable
  platform_credential: PlatformCredentialTable
  access_token: AccessTokenTable
  console_session: ConsoleSessionTable
  console_key: ConsoleKeyTable
  activity: ActivityTable
  idempotency_key: IdempotencyKeyTable
  project: ProjectTable
  site: SiteTable
  site_tag: SiteTagTable
  stream: StreamTable
  batch: BatchTable
  batch_row: BatchRowTable
  batch_payload: BatchPayloadTable
  data_source: DataSourceTable
  stream_product: StreamProductTable
  stage_product: StageProductTable
  stage_change: StageChangeTable
  rate_limit_window: RateLimitWindowTable
  feed_object: FeedObjectTable
  feed_chunk: FeedChunkTable
  site_stage: SiteStageTable
  run: RunTable
  import_history: ImportHistoryTable
  site_error: SiteErrorTable
  site_schedule: SiteScheduleTable
  site_purge: SitePurgeTable
  export_template: ExportTemplateTable
  channel: ChannelTable
  rule: RuleTable
  channel_destination: ChannelDestinationTable
  feed_file: FeedFileTable
  channel_export: ChannelExportTable
  channel_push: ChannelPushTable
  push_attempt: PushAttemptTable
  webhook: WebhookTable
  webhook_event: WebhookEventTable
  webhook_delivery: WebhookDeliveryTable
}

export type Project = Selectable<ProjectTable>
export type Site = Selectable<SiteTable>
export type SiteTag = Selectable<SiteTagTable>
export type NewSite = Insertable<SiteTable>
export type AccessToken = Selectable<AccessTokenTable>
export type Stream = Selectable<StreamTable>
export type Batch = Selectable<BatchTable>
export type DataSource = Selectable<DataSourceTable>
export type Run = Selectable<RunTable>
export type SiteStage = Selectable<SiteStageTable>
export type SiteError = Selectable<SiteErrorTable>
export type ImportHistory = Selectable<ImportHistoryTable>
export type Channel = Selectable<ChannelTable>
export type ChannelDestination = Selectable<ChannelDestinationTable>
export type FeedFile = Selectable<FeedFileTable>
export type ChannelExport = Selectable<ChannelExportTable>
export type RuleRow = Selectable<RuleTable>
export type ChannelPush = Selectable<ChannelPushTable>
export type Webhook = Selectable<WebhookTable>
export type WebhookEvent = Selectable<WebhookEventTable>
export type WebhookDelivery = Selectable<WebhookDeliveryTable>
