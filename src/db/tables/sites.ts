import type { ColumnType, Generated } from 'kysely'
import type { Id, CreatedAt } from './columns.js'

// Projects, sites, tags, runs and what a run leaves behind (src/sites/, src/jobs/).

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

export interface SitePurgeTable {
  site_id: string
  deleted_at: Generated<Date>
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
  /** When the run was let start (its site's and its account's turn); null while it waits for one. */
  admitted_at: Date | null
  /** When its current attempt claimed it; null while no attempt holds it (waiting, or handed back for a retry). */
  claimed_at: Date | null
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
