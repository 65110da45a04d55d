import type { DbHandle } from '../db/database.js'
import { accessTokenPublicId, hashSecret, sameSecret } from './secrets.js'

/** Which credentials an endpoint accepts (docs/interface.md section 5). */
export type AuthScheme = 'x-auth-token' | 'x-auth-token-or-bearer' | 'bearer'

export interface Caller {
  accountId: string
  /**
   * The credential that authenticated, stable however its header was spelled: `platform:<client_id>`
   * or `token:<access_token.id>`. Rate limits count by it, never by the header's text.
   */
  credentialId: string
  /** What a person recognises the credential by: the client id, a token's name. Never a secret. */
  label: string
}

export interface AuthHeaders {
  xAuthToken?: string | string[] | undefined
  authorization?: string | undefined
}

/** A credential as the request presents it, before it is looked up. */
export type PresentedCredential =
  { kind: 'platform'; clientId: string; secret: string } | { kind: 'token'; token: string; publicId: string | null } | { kind: 'none' }

/** What checking a credential found: the caller, or null and whether its public id names a credential. */
export interface CredentialCheck {
  caller: Caller | null
  knownPublicId: boolean
}

/** One authentication, as the failed-authentication limit sees it (src/auth/failed-auth-limit.ts). */
export interface AuthAttempt {
  /** The credential's public part (`platform:<client_id>`, `token:<public id>`); null when it has none. */
  publicId: string | null
  /** Whether the request presents a credential at all (false: no header, or a malformed one). */
  presented: boolean
  check(): Promise<CredentialCheck>
}

/** Returns the caller, or null for a missing, malformed, unknown or revoked credential. */
export async function authenticate(db: DbHandle, scheme: AuthScheme, headers: AuthHeaders): Promise<Caller | null> {
  return (await authAttempt(db, scheme, headers).check()).caller
}

export function authAttempt(db: DbHandle, scheme: AuthScheme, headers: AuthHeaders): AuthAttempt {
  const presented = presentedCredential(scheme, headers)
  return { publicId: publicIdOf(presented), presented: presented.kind !== 'none', check: () => checkCredential(db, presented) }
}

/** Reads the credential the scheme accepts from the headers; an X-Auth-Token goes before a bearer token. */
export function presentedCredential(scheme: AuthScheme, headers: AuthHeaders): PresentedCredential {
  const xAuthToken = typeof headers.xAuthToken === 'string' ? headers.xAuthToken : undefined
  if (scheme !== 'bearer' && xAuthToken !== undefined) return platformCredential(xAuthToken)
  if (scheme !== 'x-auth-token' && headers.authorization !== undefined) return bearerToken(headers.authorization)
  return { kind: 'none' }
}

function platformCredential(header: string): PresentedCredential {
  const separator = header.indexOf(':')
  const clientId = header.slice(0, Math.max(0, separator)).trim()
  const secret = header.slice(separator + 1).trim()
  return separator > 0 && clientId !== '' && secret !== '' ? { kind: 'platform', clientId, secret } : { kind: 'none' }
}

function bearerToken(header: string): PresentedCredential {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1]
  return token ? { kind: 'token', token, publicId: accessTokenPublicId(token) } : { kind: 'none' }
}

function publicIdOf(presented: PresentedCredential): string | null {
  if (presented.kind === 'platform') return `platform:${presented.clientId}`
  if (presented.kind === 'token' && presented.publicId !== null) return `token:${presented.publicId}`
  return null
}

export async function checkCredential(db: DbHandle, presented: PresentedCredential): Promise<CredentialCheck> {
  if (presented.kind === 'platform') return checkPlatformCredential(db, presented.clientId, presented.secret)
  if (presented.kind === 'token' && presented.publicId !== null) return checkTokenById(db, presented.publicId, presented.token)
  if (presented.kind === 'token') return checkTokenByHash(db, presented.token)
  return { caller: null, knownPublicId: false }
}

async function checkPlatformCredential(db: DbHandle, clientId: string, secret: string): Promise<CredentialCheck> {
  const row = await db.selectFrom('platform_credential').select(['account_id', 'secret_hash']).where('client_id', '=', clientId).executeTakeFirst()
  if (!row) return { caller: null, knownPublicId: false }
  const valid = sameSecret(hashSecret(secret), row.secret_hash)
  return { caller: valid ? { accountId: row.account_id, credentialId: `platform:${clientId}`, label: clientId } : null, knownPublicId: true }
}

/** A token with a public id: found by its id, then its hash compared (a revoked token names no credential). */
async function checkTokenById(db: DbHandle, publicId: string, token: string): Promise<CredentialCheck> {
  const row = await db
    .selectFrom('access_token')
    .select(['id', 'account_id', 'token_hash', 'name'])
    .where('public_id', '=', publicId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  if (!row) return { caller: null, knownPublicId: false }
  const valid = sameSecret(hashSecret(token), row.token_hash)
  return { caller: valid ? { accountId: row.account_id, credentialId: `token:${row.id}`, label: row.name } : null, knownPublicId: true }
}

/** A token without a public id (issued before them): found by its hash alone. */
async function checkTokenByHash(db: DbHandle, token: string): Promise<CredentialCheck> {
  const row = await db
    .selectFrom('access_token')
    .select(['id', 'account_id', 'name'])
    .where('token_hash', '=', hashSecret(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return { caller: row ? { accountId: row.account_id, credentialId: `token:${row.id}`, label: row.name } : null, knownPublicId: false }
}
