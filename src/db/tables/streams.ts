import type { ColumnType, Generated } from 'kysely'
import type { Id } from './columns.js'

// Streams, their batches and catalogs (src/streams/, src/imports/).

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
  /** The highest change sequence of a tombstone forgotten: a stage that read the changes only up to an earlier one is built whole. */
  forgotten_seq: Generated<string>
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

export interface StreamProductTable {
  stream_id: string
  product_id: string
  account_id: string
  data: ColumnType<Record<string, string> | null, string | null, string | null>
  changed_seq: string
}
