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
}

export type BatchKind = 'upsert' | 'delete' | 'delete_all'
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
  data: ColumnType<Record<string, string>, string, string>
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
  updated_at: Generated<Date>
}

export type ProcessAction = 'import' | 'export' | 'channel' | 'export-all' | 'all'
export type ProcessStatus = 'queued' | 'running' | 'success' | 'failed'

export interface ProcessTable {
  pid: string
  account_id: string
  site_id: string
  action: ProcessAction
  target_id: string | null
  trigger: 'api' | 'schedule'
  status: ProcessStatus
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

export interface Database {
  account: AccountTable
  platform_credential: PlatformCredentialTable
  access_token: AccessTokenTable
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
  site_stage: SiteStageTable
  process: ProcessTable
  import_history: ImportHistoryTable
  site_error: SiteErrorTable
  site_schedule: SiteScheduleTable
  site_purge: SitePurgeTable
}

export type Project = Selectable<ProjectTable>
export type Site = Selectable<SiteTable>
export type SiteTag = Selectable<SiteTagTable>
export type NewSite = Insertable<SiteTable>
export type AccessToken = Selectable<AccessTokenTable>
export type Stream = Selectable<StreamTable>
export type Batch = Selectable<BatchTable>
export type DataSource = Selectable<DataSourceTable>
export type Process = Selectable<ProcessTable>
export type SiteStage = Selectable<SiteStageTable>
export type SiteError = Selectable<SiteErrorTable>
export type ImportHistory = Selectable<ImportHistoryTable>
