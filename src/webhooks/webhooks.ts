import { sql } from 'kysely'
import { lockAccountCreates } from '../accounts/object-limits.js'
import type { Db, DbHandle } from '../db/database.js'
import { isId } from '../db/ids.js'
import type { Webhook } from '../db/schema.js'
import { inTransaction } from '../db/transaction.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import { ALL_EVENTS } from './event-types.js'
import { newWebhookSecret } from './signatures.js'
import { readWebhookFields, type WebhookInput, type WebhookSettings } from './webhook-input.js'
import { recordWebhookChange } from './webhook-activity.js'
import { settleRequestClaim } from '../activity/request-scope.js'

// Subscriptions of an account. The secret is shown once, by the create and the rotation
// that make it; every other read leaves it out.

/** How long a rotated-out secret keeps signing, next to the new one. */
export const PREVIOUS_SECRET_HOURS = 24

/** A subscription with the secret that was just made: the only answer that carries it. */
export interface WebhookWithSecret {
  webhook: Webhook
  secret: string
}

export async function createWebhook(db: Db, accountId: string, input: WebhookInput, settings: WebhookSettings): Promise<WebhookWithSecret> {
  if (input.url === null || input.url === undefined) throw new BadRequestError('url: is required')
  const fields = await readWebhookFields(input, settings)
  const secret = newWebhookSecret()
  return inTransaction(db, async (tx) => {
    const trx = tx.db
    await lockAccountCreates(trx, accountId)
    const { count } = await trx
      .selectFrom('webhook')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
    if (Number(count) >= settings.maxPerAccount) {
      throw new BadRequestError(
        `An account can have at most ${settings.maxPerAccount} webhooks (MAX_WEBHOOKS_PER_ACCOUNT); it has ${count}. Delete some before creating more`,
      )
    }
    const webhook = await trx
      .insertInto('webhook')
      .values({
        account_id: accountId,
        url: fields.url ?? '',
        events: fields.events ?? [ALL_EVENTS],
        active: fields.active ?? true,
        description: fields.description ?? '',
        secret,
        previous_secret: null,
        previous_secret_expires_at: null,
        failing_since: null,
        disabled_reason: null,
        disabled_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    await recordWebhookChange(trx, 'webhook.created', null, webhook)
    await settleRequestClaim(tx, { webhook, secret })
    return { webhook, secret }
  })
}

export async function listWebhooks(db: DbHandle, accountId: string): Promise<Webhook[]> {
  return db.selectFrom('webhook').selectAll().where('account_id', '=', accountId).orderBy('id').execute()
}

/** One subscription of the account; another account's, or none, is a 404. */
export async function getWebhook(db: DbHandle, accountId: string, webhookId: string, options: { forUpdate?: boolean } = {}): Promise<Webhook> {
  if (!isId(webhookId)) throw new NotFoundError()
  let query = db.selectFrom('webhook').selectAll().where('account_id', '=', accountId).where('id', '=', webhookId)
  if (options.forUpdate) query = query.forNoKeyUpdate()
  const webhook = await query.executeTakeFirst()
  if (!webhook) throw new NotFoundError()
  return webhook
}

/**
 * Changes the given fields. Activating a subscription the service disabled clears why, and counts
 * its failures from zero again.
 */
export async function updateWebhook(db: Db, accountId: string, webhookId: string, input: WebhookInput, settings: WebhookSettings): Promise<Webhook> {
  // The 404 before the body's checks, which may wait on DNS.
  await getWebhook(db, accountId, webhookId)
  const fields = await readWebhookFields(input, settings)
  return inTransaction(db, async ({ db: trx }) => {
    const current = await getWebhook(trx, accountId, webhookId, { forUpdate: true })
    if (Object.keys(fields).length === 0) return current
    const reactivated = fields.active === true && !current.active
    const updated = await trx
      .updateTable('webhook')
      .set({
        ...fields,
        ...(reactivated && { consecutive_failures: 0, failing_since: null, disabled_reason: null, disabled_at: null }),
        updated_at: sql<Date>`now()`,
      })
      .where('account_id', '=', accountId)
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    await recordWebhookChange(trx, 'webhook.updated', current, updated)
    return updated
  })
}

/** Deletes a subscription with its deliveries; events no other subscription waits for go with the cleanup. */
export async function deleteWebhook(db: Db, accountId: string, webhookId: string): Promise<void> {
  await inTransaction(db, async ({ db: trx }) => {
    const webhook = await getWebhook(trx, accountId, webhookId, { forUpdate: true })
    await trx.deleteFrom('webhook').where('account_id', '=', accountId).where('id', '=', webhook.id).execute()
    await recordWebhookChange(trx, 'webhook.deleted', webhook, null)
  })
}

/**
 * A new secret; the one it replaces keeps signing, next to it, for PREVIOUS_SECRET_HOURS, so that
 * receivers can switch without losing a delivery. A second rotation within that time replaces the
 * previous secret with the one it rotates out.
 */
export async function rotateWebhookSecret(db: Db, accountId: string, webhookId: string): Promise<WebhookWithSecret> {
  const secret = newWebhookSecret()
  const webhook = await inTransaction(db, async (tx) => {
    const trx = tx.db
    const current = await getWebhook(trx, accountId, webhookId, { forUpdate: true })
    const rotated = await trx
      .updateTable('webhook')
      .set({
        secret,
        previous_secret: current.secret,
        previous_secret_expires_at: sql<Date>`now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS})`,
        updated_at: sql<Date>`now()`,
      })
      .where('account_id', '=', accountId)
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    await recordWebhookChange(trx, 'webhook.secret_rotated', current, rotated)
    // A rotation retried with its Idempotency-Key gets this secret again instead of a third one:
    // a client whose answer was lost would otherwise hold neither of the two that still sign.
    await settleRequestClaim(tx, { webhook: rotated, secret })
    return rotated
  })
  return { webhook, secret }
}
