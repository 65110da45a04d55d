import { randomBytes } from 'node:crypto'
import type { DbHandle } from '../db/database.js'
import { hashSecret } from '../auth/secrets.js'

/** Who a console session belongs to: an account, or the operator (no account). */
export interface ConsoleSession {
  accountId: string | null
  operator: boolean
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
export async function openConsoleSession(
  db: DbHandle,
  owner: { accountId: string | null; operator: boolean },
  now: Date,
  ttlMs: number,
): Promise<NewConsoleSession> {
  const id = randomBytes(32).toString('base64url')
  const session: ConsoleSession = { ...owner, csrfToken: randomBytes(24).toString('base64url'), expiresAt: new Date(now.getTime() + ttlMs) }
  await db
    .insertInto('console_session')
    .values({
      id_hash: hashSecret(id),
      account_id: owner.accountId,
      operator: owner.operator,
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
    .select(['account_id', 'operator', 'csrf_token', 'expires_at'])
    .where('id_hash', '=', hashSecret(id))
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return row ? { accountId: row.account_id, operator: row.operator, csrfToken: row.csrf_token, expiresAt: row.expires_at } : undefined
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
