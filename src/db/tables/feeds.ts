import type { ColumnType, Generated } from 'kysely'
import type { Id, CreatedAt } from './columns.js'

// Feed files and where Postgres keeps them (src/feeds/).

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
