import type { DbHandle } from '../db/database.js'
import type { Webhook, WebhookDeliveryStatus } from '../db/schema.js'
import { NotFoundError } from '../errors.js'
import { getDelivery, listDeliveries, type DeliveryRow } from './deliveries.js'
import { listWebhooks } from './webhooks.js'

/** A delivery's statuses, in the order a person reads them: the one list the API, its docs and the console use. */
export const DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ['pending', 'delivered', 'failed']

/** The delivery status `value` names, if it names one. */
export function deliveryStatus(value: string): WebhookDeliveryStatus | undefined {
  return DELIVERY_STATUSES.find((status) => status === value)
}

/** One subscription with a page of its deliveries, newest first. */
export interface WebhookPanel {
  webhook: Webhook
  deliveries: DeliveryRow[]
  /** Older deliveries (of the filter) follow this page. */
  more: boolean
  offset: number
  /** The status the list is filtered by; '' for all. */
  status: string
}

export interface WebhookOverviewRequest {
  /** The subscription whose list is paged and filtered; '' for none. */
  chosen: string
  status: WebhookDeliveryStatus | undefined
  offset: number
  /** A delivery of the chosen subscription just retried, shown above the lists; '' for none. */
  retried: string
  perPage: number
}

/**
 * The account's webhooks, each with a page of its deliveries: the chosen one's at `offset` and
 * filtered by `status`, the others' first page. A chosen subscription of another account is not found.
 */
export async function webhookOverview(
  db: DbHandle,
  accountId: string,
  request: WebhookOverviewRequest,
): Promise<{ panels: WebhookPanel[]; retried: DeliveryRow | undefined }> {
  const { chosen, perPage } = request
  const webhooks = await listWebhooks(db, accountId)
  if (chosen && !webhooks.some((webhook) => webhook.id === chosen)) throw new NotFoundError('There is no such webhook')
  const retried = chosen && request.retried ? await getDelivery(db, accountId, chosen, request.retried) : undefined
  const panels: WebhookPanel[] = []
  // One subscription after the other: an account may have many, each list is one short query.
  for (const webhook of webhooks) {
    const isChosen = webhook.id === chosen
    const status = isChosen ? request.status : undefined
    const offset = isChosen ? request.offset : 0
    const found = await listDeliveries(db, accountId, webhook.id, { limit: perPage + 1, offset, ...(status && { status }) })
    panels.push({ webhook, deliveries: found.slice(0, perPage), more: found.length > perPage, offset, status: status ?? '' })
  }
  return { panels, retried }
}
