import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { retryDelivery } from '../webhooks/deliveries.js'
import { deliveryStatus, webhookOverview } from '../webhooks/webhook-overview.js'
import type { ConsoleDeps } from './deps.js'
import { page } from './layout.js'
import { OffsetForm, WebhookDeliveryParams, WebhooksQuery } from './page-params.js'
import { accountOfSession, queryInt, queryText, sendPage } from './pages.js'
import { DELIVERIES_PER_PAGE, webhooksPage } from './webhook-page-views.js'

const TRAIL: [string, string][] = [
  ['Overview', '/console'],
  ['Webhooks', '/console/webhooks'],
]
/**
 * The account's webhooks and their deliveries, newest first: a page of each, the one named by
 * `?webhook=` at `offset` and filtered by `status`; a retry sends a delivery again now.
 */
export const webhookPageRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, { db, config }) => {
  app.get('/console/webhooks', { schema: { hide: true, querystring: WebhooksQuery } }, async (request, reply) => {
    const accountId = accountOfSession(request)
    const { query } = request
    const chosen = queryText(query.webhook, 20)
    const overview = {
      chosen,
      status: deliveryStatus(queryText(query.status, 16)),
      offset: queryInt(query.offset, 0),
      retried: queryText(query.retried, 20),
      perPage: DELIVERIES_PER_PAGE,
    }
    const { panels, retried } = await webhookOverview(db, accountId, overview)
    const body = webhooksPage({ panels, session: request.consoleSession!, retried })
    return sendPage(reply, page({ title: 'Webhooks', session: request.consoleSession, trail: TRAIL, body }))
  })

  app.post(
    '/console/webhooks/:webhookId/deliveries/:deliveryId/retry',
    { schema: { hide: true, params: WebhookDeliveryParams, body: OffsetForm } },
    async (request, reply) => {
      const accountId = accountOfSession(request)
      const { webhookId, deliveryId } = request.params
      const retried = await retryDelivery(db, accountId, webhookId, deliveryId, { retryHours: config.WEBHOOK_RETRY_HOURS })
      // Back to the page the list was on (unfiltered: the delivery is pending now, whatever it was).
      const offset = queryInt(request.body.offset, 0)
      return reply.redirect(`/console/webhooks?webhook=${retried.webhook_id}&offset=${offset}&retried=${retried.id}#delivery-${retried.id}`, 303)
    },
  )
}
