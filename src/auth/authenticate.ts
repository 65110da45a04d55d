import type { DbHandle } from '../db/database.js'
import { hashSecret } from './secrets.js'

/** Which credentials an endpoint accepts (SPEC.md section 5). */
export type AuthScheme = 'x-auth-token' | 'x-auth-token-or-bearer' | 'bearer'

export interface Caller {
  accountId: string
}

export interface AuthHeaders {
  xAuthToken?: string | string[] | undefined
  authorization?: string | undefined
}

/** Returns the caller, or null for a missing, malformed, unknown or revoked credential. */
export async function authenticate(db: DbHandle, scheme: AuthScheme, headers: AuthHeaders): Promise<Caller | null> {
  const xAuthToken = typeof headers.xAuthToken === 'string' ? headers.xAuthToken : undefined
  if (scheme !== 'bearer' && xAuthToken !== undefined) return byPlatformCredential(db, xAuthToken)
  if (scheme !== 'x-auth-token' && headers.authorization !== undefined) return byBearerToken(db, headers.authorization)
  return null
}

async function byPlatformCredential(db: DbHandle, header: string): Promise<Caller | null> {
  const separator = header.indexOf(':')
  if (separator <= 0 || separator === header.length - 1) return null
  const clientId = header.slice(0, separator).trim()
  const secret = header.slice(separator + 1).trim()
  const row = await db
    .selectFrom('platform_credential')
    .select('account_id')
    .where('client_id', '=', clientId)
    .where('secret_hash', '=', hashSecret(secret))
    .executeTakeFirst()
  return row ? { accountId: row.account_id } : null
}

async function byBearerToken(db: DbHandle, header: string): Promise<Caller | null> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!match?.[1]) return null
  const row = await db
    .selectFrom('access_token')
    .select('account_id')
    .where('token_hash', '=', hashSecret(match[1]))
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return row ? { accountId: row.account_id } : null
}
