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

export interface Database {
  account: AccountTable
  platform_credential: PlatformCredentialTable
  access_token: AccessTokenTable
  project: ProjectTable
  site: SiteTable
  site_tag: SiteTagTable
}

export type Project = Selectable<ProjectTable>
export type Site = Selectable<SiteTable>
export type SiteTag = Selectable<SiteTagTable>
export type NewSite = Insertable<SiteTable>
export type AccessToken = Selectable<AccessTokenTable>
