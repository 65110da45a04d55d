import { randomBytes } from 'node:crypto'
import type { DbHandle } from '../db/database.js'
import { hashSecret } from '../auth/secrets.js'

/** Who a console session belongs to: an account, or the operator (no account). */
/** Who signs in: an account through one of its credentials, or the operator. */
export interface ConsoleOwner {
  accountId: string | null
  operator: boolean
  /** `platform:<client_id>`, `token:<id>`, or `operatorMark` of the operator token. */
  credentialId: string
}

export interface ConsoleSession extends ConsoleOwner {
  /** The token every form that writes must carry (synchronizer token). */
  csrfToken: string
  expiresAt: Date
}

export interface NewConsoleSession {
  /** The cookie's value: shown once, stored only as its hash. */
  id: string
  session: ConsoleSession
}

/** Opens a session for `accountId` (or the operator when null) that ends `ttlMs` after `now`. */
export async function openConsoleSession(db: DbHandle, owner: ConsoleOwner, now: Date, ttlMs: number): Promise<NewConsoleSession> {
  const id = randomBytes(32).toString('base64url')
  const session: ConsoleSession = { ...owner, csrfToken: randomBytes(24).toString('base64url'), expiresAt: new Date(now.getTime() + ttlMs) }
  await db
    .insertInto('console_session')
    .values({
      id_hash: hashSecret(id),
      account_id: owner.accountId,
      operator: owner.operator,
      credential_id: owner.credentialId,
      csrf_token: session.csrfToken,
      created_at: now,
      expires_at: session.expiresAt,
    })
    .execute()
  return { id, session }
}

/** The live session of a cookie's id; undefined when unknown or expired. */
export async function findConsoleSession(db: DbHandle, id: string, now: Date): Promise<ConsoleSession | undefined> {
  const row = await db
    .selectFrom('console_session')
    .select(['account_id', 'operator', 'credential_id', 'csrf_token', 'expires_at'])
    .where('id_hash', '=', hashSecret(id))
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return row
    ? { accountId: row.account_id, operator: row.operator, credentialId: row.credential_id, csrfToken: row.csrf_token, expiresAt: row.expires_at }
    : undefined
}

export async function closeConsoleSession(db: DbHandle, id: string): Promise<void> {
  await db.deleteFrom('console_session').where('id_hash', '=', hashSecret(id)).execute()
}

/** Sessions past their end, removed by the hourly cleanup. */
export async function deleteExpiredConsoleSessions(db: DbHandle, now: Date): Promise<number> {
  const result = await db.deleteFrom('console_session').where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** The key that signs the console's cookies: made once, shared by every process on the database. */
export async function consoleCookieKey(db: DbHandle): Promise<string> {
  await db
    .insertInto('console_key')
    .values({ id: 1, secret: randomBytes(32).toString('base64url') })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .execute()
  const row = await db.selectFrom('console_key').select('secret').where('id', '=', 1).executeTakeFirstOrThrow()
  return row.secret
}

/** What an operator session records of the token it signed in with: a hash, never the token. */
export function operatorMark(token: string): string {
  return `operator:${hashSecret(token).slice(0, 32)}`
}

/**
 * Whether the credential an account's session signed in with is still valid: a revoked token or a
 * rotated platform credential ends its console sessions too.
 */
export async function sessionCredentialIsLive(db: DbHandle, session: ConsoleSession): Promise<boolean> {
  const { accountId, credentialId } = session
  if (accountId === null) return false
  const [kind, id] = [credentialId.slice(0, credentialId.indexOf(':')), credentialId.slice(credentialId.indexOf(':') + 1)]
  if (kind === 'platform') {
    const row = await db
      .selectFrom('platform_credential')
      .select('client_id')
      .where('account_id', '=', accountId)
      .where('client_id', '=', id)
      .executeTakeFirst()
    return row !== undefined
  }
  if (kind === 'token' && /^\d{1,18}$/.test(id)) {
    const row = await db
      .selectFrom('access_token')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return row !== undefined
  }
  return false
}
