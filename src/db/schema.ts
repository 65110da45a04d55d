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
}

export type Project = Selectable<ProjectTable>
export type Site = Selectable<SiteTable>
export type SiteTag = Selectable<SiteTagTable>
export type NewSite = Insertable<SiteTable>
export type AccessToken = Selectable<AccessTokenTable>
export type Stream = Selectable<StreamTable>
export type Batch = Selectable<BatchTable>
export type DataSource = Selectable<DataSourceTable>
