import type { ColumnType, Generated } from 'kysely'
import type { Id, CreatedAt } from './columns.js'

// Webhooks, their events and deliveries (src/webhooks/).

/** An account's subscription to events. */
export interface WebhookTable {
  id: Id
  account_id: string
  url: string
  /** Event types, or the one entry `all`. */
  events: string[]
  active: Generated<boolean>
  description: Generated<string>
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: Date | null
  consecutive_failures: Generated<number>
  failing_since: Date | null
  disabled_reason: string | null
  disabled_at: Date | null
  created_at: CreatedAt
  updated_at: Generated<Date>
}

/** The outbox of events; the id is the `webhook-id` header. */
export interface WebhookEventTable {
  id: string
  account_id: string
  type: string
  payload: ColumnType<Record<string, unknown>, string, never>
  created_at: CreatedAt
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One event to one subscription. */
export interface WebhookDeliveryTable {
  id: Id
  account_id: string
  webhook_id: string
  event_id: string
  status: Generated<WebhookDeliveryStatus>
  attempts: Generated<number>
  next_attempt_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  retry_until: Date | null
  locked_until: Date | null
  last_attempt_at: Date | null
  last_response_code: number | null
  last_error: string | null
  response_body: string | null
  created_at: CreatedAt
  finished_at: Date | null
}
