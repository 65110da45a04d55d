import type { ColumnType } from 'kysely'
import type { Id, CreatedAt } from './columns.js'

// Accounts, their credentials and tokens, and console sessions (src/accounts/, src/auth/).

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
