import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountOf } from '../auth/caller.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'
import { listDeliveries, retryDelivery } from '../webhooks/deliveries.js'
import { webhookSettings } from '../webhooks/webhook-input.js'
import { DELIVERY_STATUSES } from '../webhooks/webhook-overview.js'
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, rotateWebhookSecret, updateWebhook } from '../webhooks/webhooks.js'
import { baseOf, type PlatformDeps } from './deps.js'
import { Envelope, NullableBoolean, NullableString, OneOf, SuccessBody, conflictResponse, errorResponses, writeErrorResponses } from './schemas.js'
import { DeliveryOut, WebhookOut, deliveryView, webhookView } from './webhook-views.js'

// Webhooks: an account's subscriptions to events, signed as Standard Webhooks has it,
// and their deliveries. X-Auth-Token or bearer, like the process endpoint.

const WebhookBody = Type.Object({
  url: Type.Optional(NullableString({ description: 'https URL of the receiver (http only where the operator allows it)' })),
  // Not an enum: readEvents (webhook-input.ts) also takes "all" alone and trimmed names, and names the entry (events[2]) of a mistake.
  events: Type.Optional(Type.Unknown({ description: 'a list of event types, or "all" (the default on create)' })),
  active: Type.Optional(NullableBoolean()),
  description: Type.Optional(NullableString()),
})
const WebhookParams = Type.Object({ webhookId: Type.String() })
const DeliveryParams = Type.Object({ webhookId: Type.String(), deliveryId: Type.String() })
const DeliveryQuery = Type.Object({
  status: Type.Optional(OneOf(DELIVERY_STATUSES)),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
})
const Webhooks = Envelope('Webhooks', WebhookOut)
const Deliveries = Envelope('Deliveries', DeliveryOut)
const tags = ['webhooks']
const config = { auth: 'x-auth-token-or-bearer' as const }

const createWebhookSchema = {
  operationId: 'createWebhook',
  tags,
  headers: IdempotencyHeaders,
  body: WebhookBody,
  response: { 201: Webhooks, ...writeErrorResponses },
}
const listWebhooksSchema = { operationId: 'listWebhooks', tags, response: { 200: Webhooks, ...errorResponses } }
const getWebhookSchema = { operationId: 'getWebhook', tags, params: WebhookParams, response: { 200: Webhooks, ...errorResponses } }
const updateWebhookSchema = {
  operationId: 'updateWebhook',
  tags,
  params: WebhookParams,
  body: WebhookBody,
  response: { 200: Webhooks, ...writeErrorResponses },
}
const deleteWebhookSchema = { operationId: 'deleteWebhook', tags, params: WebhookParams, response: { 200: SuccessBody, ...errorResponses } }
const rotateSecretSchema = {
  operationId: 'rotateWebhookSecret',
  tags,
  headers: IdempotencyHeaders,
  params: WebhookParams,
  response: { 200: Webhooks, ...errorResponses },
}
const listDeliveriesSchema = {
  operationId: 'listWebhookDeliveries',
  tags,
  params: WebhookParams,
  querystring: DeliveryQuery,
  response: { 200: Deliveries, ...errorResponses },
}
const retryDeliverySchema = {
  operationId: 'retryWebhookDelivery',
  tags,
  params: DeliveryParams,
  response: { 200: Deliveries, ...errorResponses, ...conflictResponse },
}

export const webhookRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db } = deps
  const settings = webhookSettings(deps.config, deps.outbound)

  app.post('/webhooks', { config, schema: createWebhookSchema }, async (request, reply) =>
    answerOnce(request, reply, deps, {
      run: () => createWebhook(db, accountOf(request), request.body, settings),
      render: ({ webhook, secret }) => ({ status: 201, body: { success: true as const, Webhooks: [webhookView(webhook, baseOf(request, deps), secret)] } }),
    }),
  )

  app.get('/webhooks', { config, schema: listWebhooksSchema }, async (request) => {
    const found = await listWebhooks(db, accountOf(request))
    return { success: true as const, Webhooks: found.map((webhook) => webhookView(webhook, baseOf(request, deps))) }
  })

  app.get('/webhooks/:webhookId', { config, schema: getWebhookSchema }, async (request) => {
    const webhook = await getWebhook(db, accountOf(request), request.params.webhookId)
    return { success: true as const, Webhooks: [webhookView(webhook, baseOf(request, deps))] }
  })

  app.put('/webhooks/:webhookId', { config, schema: updateWebhookSchema }, async (request) => {
    const webhook = await updateWebhook(db, accountOf(request), request.params.webhookId, request.body, settings)
    return { success: true as const, Webhooks: [webhookView(webhook, baseOf(request, deps))] }
  })

  app.delete('/webhooks/:webhookId', { config, schema: deleteWebhookSchema }, async (request) => {
    await deleteWebhook(db, accountOf(request), request.params.webhookId)
    return { success: true as const }
  })

  app.post('/webhooks/:webhookId/rotate-secret', { config, schema: rotateSecretSchema }, async (request, reply) =>
    answerOnce(request, reply, deps, {
      run: () => rotateWebhookSecret(db, accountOf(request), request.params.webhookId),
      render: ({ webhook, secret }) => ({ status: 200, body: { success: true as const, Webhooks: [webhookView(webhook, baseOf(request, deps), secret)] } }),
    }),
  )

  app.get('/webhooks/:webhookId/deliveries', { config, schema: listDeliveriesSchema }, async (request) => {
    const { status, limit, offset } = request.query
    const page = { limit, offset, ...(status && { status }) }
    const found = await listDeliveries(db, accountOf(request), request.params.webhookId, page)
    return { success: true as const, Deliveries: found.map((delivery) => deliveryView(delivery, baseOf(request, deps))) }
  })

  app.post('/webhooks/:webhookId/deliveries/:deliveryId/retry', { config, schema: retryDeliverySchema }, async (request) => {
    const { webhookId, deliveryId } = request.params
    const retried = await retryDelivery(db, accountOf(request), webhookId, deliveryId, settings)
    return { success: true as const, Deliveries: [deliveryView(retried, baseOf(request, deps))] }
  })
}
