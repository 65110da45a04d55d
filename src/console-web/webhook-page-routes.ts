import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { WebhookDeliveryStatus } from '../db/schema.js'
import { NotFoundError } from '../errors.js'
import { getDelivery, listDeliveries, retryDelivery, type DeliveryRow } from '../webhooks/deliveries.js'
import { listWebhooks } from '../webhooks/webhooks.js'
import type { ConsoleDeps } from './deps.js'
import { page } from './layout.js'
import { WebhookDeliveryParams, WebhooksQuery } from './page-params.js'
import { accountOfSession, queryInt, queryText, sendPage } from './pages.js'
import { DELIVERIES_PER_PAGE, webhooksPage, type WebhookPanel } from './webhook-page-views.js'

const TRAIL: [string, string][] = [
  ['Overview', '/console'],
  ['Webhooks', '/console/webhooks'],
]
const STATUSES: readonly WebhookDeliveryStatus[] = ['pending', 'delivered', 'failed']

function deliveryStatus(value: string): WebhookDeliveryStatus | undefined {
  return STATUSES.find((status) => status === value)
}

/**
 * The account's webhooks and their deliveries, newest first: a page of each, the one named by
 * `?webhook=` at `offset` and filtered by `status`; a retry sends a delivery again now.
 */
export const webhookPageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db, config }) => {
  app.get('/console/webhooks', { schema: { hide: true, querystring: WebhooksQuery } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const { query } = request
    const chosen = queryText(query.webhook, 20)
    const webhooks = await listWebhooks(db, accountId)
    if (chosen && !webhooks.some((webhook) => webhook.id === chosen)) throw new NotFoundError('There is no such webhook')
    const retriedId = queryText(query.retried, 20)
    const retried: DeliveryRow | undefined = chosen && retriedId ? await getDelivery(db, accountId, chosen, retriedId) : undefined
    const panels: WebhookPanel[] = []
    // One subscription after the other: an account may have many, each list is one short query.
    for (const webhook of webhooks) {
      const isChosen = webhook.id === chosen
      const status = isChosen ? deliveryStatus(queryText(query.status, 16)) : undefined
      const offset = isChosen ? queryInt(query.offset, 0) : 0
      const found = await listDeliveries(db, accountId, webhook.id, { limit: DELIVERIES_PER_PAGE + 1, offset, ...(status && { status }) })
      panels.push({ webhook, deliveries: found.slice(0, DELIVERIES_PER_PAGE), more: found.length > DELIVERIES_PER_PAGE, offset, status: status ?? '' })
    }
    const body = webhooksPage({ panels, session: request.consoleSession!, retried })
    return sendPage(reply, page({ title: 'Webhooks', session: request.consoleSession, trail: TRAIL, body }))
  })

  app.post('/console/webhooks/:webhookId/deliveries/:deliveryId/retry', { schema: { hide: true, params: WebhookDeliveryParams } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const { webhookId, deliveryId } = request.params
    const retried = await retryDelivery(db, accountId, webhookId, deliveryId, { retryHours: config.WEBHOOK_RETRY_HOURS })
    // Back to the page the list was on (unfiltered: the delivery is pending now, whatever it was).
    const offset = queryInt((request.body as { offset?: unknown } | undefined)?.offset, 0)
    return reply.redirect(`/console/webhooks?webhook=${retried.webhook_id}&offset=${offset}&retried=${retried.id}#delivery-${retried.id}`, 303)
  })
}
