import { Type } from '@sinclair/typebox'
import type { Webhook } from '../db/schema.js'
import type { DeliveryRow } from '../webhooks/deliveries.js'
import { DELIVERY_STATUSES } from '../webhooks/webhook-overview.js'
import { formatTimestamp, links } from './envelope.js'
import { Links, OneOf, Timestamp } from './schemas.js'

// What the webhook routes answer: subscriptions (`Webhooks`) and their deliveries (`Deliveries`),
// in the platform envelope. The secret appears only in the answers that made it.

const NullableTimestamp = Type.Union([Timestamp, Type.Null()])

export const WebhookOut = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String(), { description: 'event types, or ["all"]' }),
  active: Type.Boolean(),
  description: Type.String(),
  secret: Type.Optional(Type.String({ description: 'whsec_...: only in the answers of create and rotate-secret; store it then' })),
  previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], { description: 'until then the secret replaced by the last rotation also signs' }),
  consecutive_failures: Type.Integer(),
  disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'why the service disabled the webhook, if it did' }),
  disabled_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  links: Links,
})

export const DeliveryOut = Type.Object({
  id: Type.String(),
  webhook_id: Type.String(),
  event_id: Type.String({ description: 'the webhook-id header: the same on every attempt' }),
  event_type: Type.String(),
  status: OneOf(DELIVERY_STATUSES),
  attempts: Type.Integer(),
  last_response_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'the first KiB of the last answer' }),
  next_attempt_at: NullableTimestamp,
  last_attempt_at: NullableTimestamp,
  created_at: Timestamp,
  finished_at: NullableTimestamp,
  links: Links,
})

const stamp = (date: Date | null) => (date ? formatTimestamp(date) : null)

export function webhookView(webhook: Webhook, base: string, secret?: string) {
  const self = `/platform/v2/webhooks/${webhook.id}`
  const previousValid = webhook.previous_secret_expires_at && webhook.previous_secret_expires_at.getTime() > Date.now()
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    active: webhook.active,
    description: webhook.description,
    ...(secret !== undefined && { secret }),
    previous_secret_expires_at: previousValid ? stamp(webhook.previous_secret_expires_at) : null,
    consecutive_failures: webhook.consecutive_failures,
    disabled_reason: webhook.disabled_reason,
    disabled_at: stamp(webhook.disabled_at),
    created_at: formatTimestamp(webhook.created_at),
    updated_at: formatTimestamp(webhook.updated_at),
    links: links(base, { self, deliveries: `${self}/deliveries`, 'rotate-secret': `${self}/rotate-secret` }),
  }
}

export function deliveryView(delivery: DeliveryRow, base: string) {
  const webhook = `/platform/v2/webhooks/${delivery.webhook_id}`
  return {
    id: delivery.id,
    webhook_id: delivery.webhook_id,
    event_id: delivery.event_id,
    event_type: delivery.event_type,
    status: delivery.status,
    attempts: delivery.attempts,
    last_response_code: delivery.last_response_code,
    last_error: delivery.last_error,
    response_body: delivery.response_body,
    next_attempt_at: delivery.status === 'pending' ? stamp(delivery.next_attempt_at) : null,
    last_attempt_at: stamp(delivery.last_attempt_at),
    created_at: formatTimestamp(delivery.created_at),
    finished_at: stamp(delivery.finished_at),
    links: links(base, { webhook, retry: `${webhook}/deliveries/${delivery.id}/retry` }),
  }
}
