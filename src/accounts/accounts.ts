import type { Db, DbHandle } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import { hashSecret, newAccessToken, newClientId, newClientSecret } from '../auth/secrets.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import { recordActivities, recordActivity, type NewActivity } from '../activity/activity-store.js'
import { isId } from '../db/ids.js'

export interface PlatformCredential {
  clientId: string
  clientSecret: string
  /** The value of the X-Auth-Token header. */
  xAuthToken: string
}

export interface IssuedToken {
  id: string
  name: string
  token: string
}

export interface CreatedAccount {
  accountId: string
  credential: PlatformCredential
  token: IssuedToken
}

export async function createAccount(db: Db, name: string): Promise<CreatedAccount> {
  const trimmed = name.trim()
  if (trimmed === '') throw new BadRequestError('name: must not be empty')
  return inTransaction(db, async ({ db: trx }) => {
    const account = await trx.insertInto('account').values({ name: trimmed }).returning('id').executeTakeFirstOrThrow()
    const credential = await issueCredential(trx, account.id)
    const token = await issueToken(trx, account.id, 'default')
    await recordActivities(trx, [
      { accountId: account.id, action: 'account.created', target: { type: 'account', id: account.id }, changes: { name: [null, trimmed] } },
      credentialIssued(account.id, credential.clientId),
      tokenIssued(account.id, token),
    ])
    return { accountId: account.id, credential, token }
  })
}

export async function listAccounts(db: DbHandle) {
  return db
    .selectFrom('account')
    .leftJoin('platform_credential', 'platform_credential.account_id', 'account.id')
    .select(['account.id', 'account.name', 'account.created_at', 'platform_credential.client_id'])
    .orderBy('account.id')
    .execute()
}

/** Replaces the account's secret (and client id): the old X-Auth-Token stops working at once. */
export async function rotateCredential(db: Db, accountId: string): Promise<PlatformCredential> {
  return inTransaction(db, async ({ db: trx }) => {
    await requireAccount(trx, accountId)
    const old = await trx.deleteFrom('platform_credential').where('account_id', '=', accountId).returning('client_id').executeTakeFirst()
    const credential = await issueCredential(trx, accountId)
    await recordActivity(trx, {
      accountId,
      action: 'credential.rotated',
      target: { type: 'platform_credential', id: credential.clientId },
      changes: { client_id: [old?.client_id ?? null, credential.clientId], secret: 'changed' },
    })
    return credential
  })
}

function credentialIssued(accountId: string, clientId: string): NewActivity {
  return {
    accountId,
    action: 'credential.created',
    target: { type: 'platform_credential', id: clientId },
    changes: { client_id: [null, clientId], secret: 'changed' },
  }
}

function tokenIssued(accountId: string, token: IssuedToken): NewActivity {
  return { accountId, action: 'token.created', target: { type: 'token', id: token.id }, changes: { name: [null, token.name], token: 'changed' } }
}

export async function createToken(db: Db, accountId: string, name: string): Promise<IssuedToken> {
  return inTransaction(db, async ({ db: trx }) => {
    await requireAccount(trx, accountId)
    const token = await issueToken(trx, accountId, name.trim() || 'token')
    await recordActivity(trx, tokenIssued(accountId, token))
    return token
  })
}

export async function listTokens(db: DbHandle, accountId: string) {
  await requireAccount(db, accountId)
  return db.selectFrom('access_token').select(['id', 'name', 'created_at', 'revoked_at']).where('account_id', '=', accountId).orderBy('id').execute()
}

export async function revokeToken(db: Db, tokenId: string): Promise<void> {
  if (!isId(tokenId)) throw new NotFoundError(`No access token with id ${tokenId}`)
  await inTransaction(db, async ({ db: trx }) => {
    const revoked = await trx
      .updateTable('access_token')
      .set({ revoked_at: new Date() })
      .where('id', '=', tokenId)
      .where('revoked_at', 'is', null)
      .returning(['account_id', 'name', 'revoked_at'])
      .executeTakeFirst()
    if (!revoked) throw new NotFoundError(`No active access token with id ${tokenId}`)
    const changes = {
      revoked_at: [null, revoked.revoked_at?.toISOString() ?? null] as [unknown, unknown],
      name: [revoked.name, revoked.name] as [unknown, unknown],
    }
    await recordActivity(trx, { accountId: revoked.account_id, action: 'token.revoked', target: { type: 'token', id: tokenId }, changes })
  })
}

async function requireAccount(db: DbHandle, accountId: string): Promise<void> {
  const found = isId(accountId) ? await db.selectFrom('account').select('id').where('id', '=', accountId).executeTakeFirst() : undefined
  if (!found) throw new NotFoundError(`No account with id ${accountId}`)
}

async function issueCredential(db: DbHandle, accountId: string): Promise<PlatformCredential> {
  const clientId = newClientId()
  const clientSecret = newClientSecret()
  await db
    .insertInto('platform_credential')
    .values({ account_id: accountId, client_id: clientId, secret_hash: hashSecret(clientSecret), rotated_at: null })
    .execute()
  return { clientId, clientSecret, xAuthToken: `${clientId}:${clientSecret}` }
}

async function issueToken(db: DbHandle, accountId: string, name: string): Promise<IssuedToken> {
  const { token, publicId } = newAccessToken()
  const row = await db
    .insertInto('access_token')
    .values({ account_id: accountId, name, public_id: publicId, token_hash: hashSecret(token), revoked_at: null })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { id: row.id, name, token }
}
