import { sql } from 'kysely'
import type { Db, DbHandle } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import { recordActivity } from '../activity/activity-store.js'
import { isId } from '../db/ids.js'
import type { WebhookDelivery, WebhookDeliveryStatus } from '../db/schema.js'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import { deliveriesDue } from './delivery-signal.js'
import type { WebhookSettings } from './webhook-input.js'
import { getWebhook } from './webhooks.js'

// What an account sees of its deliveries, and the retry it may ask for.

export type DeliveryRow = WebhookDelivery & { event_type: string }

export interface DeliveryPage {
  limit: number
  offset: number
  status?: WebhookDeliveryStatus
}

/** A subscription's deliveries, newest first. */
export async function listDeliveries(db: DbHandle, accountId: string, webhookId: string, page: DeliveryPage): Promise<DeliveryRow[]> {
  const webhook = await getWebhook(db, accountId, webhookId)
  let query = selectDeliveries(db, accountId).where('d.webhook_id', '=', webhook.id)
  if (page.status) query = query.where('d.status', '=', page.status)
  return query.orderBy('d.id', 'desc').limit(page.limit).offset(page.offset).execute()
}

/** One delivery of the account's subscription; another account's, or none, is a 404. */
export async function getDelivery(db: DbHandle, accountId: string, webhookId: string, deliveryId: string): Promise<DeliveryRow> {
  const webhook = await getWebhook(db, accountId, webhookId)
  if (!isId(deliveryId)) throw new NotFoundError()
  const found = await selectDeliveries(db, accountId).where('d.webhook_id', '=', webhook.id).where('d.id', '=', deliveryId).executeTakeFirst()
  if (!found) throw new NotFoundError()
  return found
}

function selectDeliveries(db: DbHandle, accountId: string) {
  return db
    .selectFrom('webhook_delivery as d')
    .innerJoin('webhook_event as e', (join) => join.onRef('e.id', '=', 'd.event_id').onRef('e.account_id', '=', 'd.account_id'))
    .selectAll('d')
    .select('e.type as event_type')
    .where('d.account_id', '=', accountId)
}

/**
 * Sends a delivery again, now: a failed one, a delivered one (the receiver sees the same
 * `webhook-id` again), or a pending one before its back-off ends. Its retries get a new window
 * of WEBHOOK_RETRY_HOURS from now.
 */
export async function retryDelivery(
  db: Db,
  accountId: string,
  webhookId: string,
  deliveryId: string,
  settings: Pick<WebhookSettings, 'retryHours'>,
): Promise<DeliveryRow> {
  const webhook = await getWebhook(db, accountId, webhookId)
  if (!isId(deliveryId)) throw new NotFoundError()
  const found = await selectDeliveries(db, accountId).where('d.webhook_id', '=', webhook.id).where('d.id', '=', deliveryId).executeTakeFirst()
  if (!found) throw new NotFoundError()
  if (!webhook.active) {
    throw new BadRequestError(`Webhook ${webhook.id} is not active: activate it (PUT with "active": true) before retrying its deliveries`)
  }
  const retried = await inTransaction(db, async ({ db: trx }) => {
    const row = await retryRow(trx, accountId, found.id, settings)
    const target = { type: 'webhook_delivery', id: found.id }
    if (row)
      await recordActivity(trx, {
        accountId,
        action: 'webhook_delivery.retried',
        target,
        changes: { status: [found.status, 'pending'], webhook_id: [null, webhook.id] },
      })
    return row
  })
  if (!retried) throw new ConflictError(`Delivery ${found.id} is being sent right now; ask again once its attempt has ended`)
  deliveriesDue()
  return { ...retried, event_type: found.event_type }
}

function retryRow(db: DbHandle, accountId: string, deliveryId: string, settings: Pick<WebhookSettings, 'retryHours'>) {
  return (
    db
      .updateTable('webhook_delivery')
      .set({
        status: 'pending',
        next_attempt_at: sql<Date>`now()`,
        retry_until: sql<Date>`now() + make_interval(secs => ${Math.round(settings.retryHours * 3600)})`,
        finished_at: null,
      })
      .where('account_id', '=', accountId)
      .where('id', '=', deliveryId)
      // An attempt under way ends as it ends; a retry then would send the event twice at once.
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', sql<Date>`now()`)]))
      .returningAll()
      .executeTakeFirst()
  )
}
