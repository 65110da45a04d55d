import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Tx } from '../db/transaction.js'
import { deliveriesDue } from './delivery-signal.js'
import { ALL_EVENTS, type WebhookEventType } from './event-types.js'
import type { EventDataOf } from './payloads.js'

export interface RecordedEvent {
  /** The event's id, the `webhook-id` of its deliveries. */
  id: string
  /** Deliveries made: one per active subscription of the account that takes the type. */
  deliveries: number
}

/**
 * Records an event of an account in the caller's transaction: the event in the outbox and one
 * delivery per active subscription that takes its type, in one statement. Nothing is sent before
 * the transaction commits, and nothing at all if it rolls back; after the commit the delivery
 * workers of this process are woken. An account without a matching subscription stores nothing.
 *
 *   await recordEvent(tx, accountId, 'run.succeeded', runSucceededData(run))
 */
export async function recordEvent<T extends WebhookEventType>(
  tx: Pick<Tx, 'db' | 'onCommit'>,
  accountId: string,
  type: T,
  data: EventDataOf<T>,
): Promise<RecordedEvent> {
  const id = randomUUID()
  const { rows } = await sql<{ count: string }>`
    WITH subscribed AS (
      SELECT id FROM webhook
      WHERE account_id = ${accountId}::bigint AND active AND (${ALL_EVENTS}::text = ANY (events) OR ${type}::text = ANY (events))
    ), event AS (
      INSERT INTO webhook_event (id, account_id, type, payload)
      SELECT ${id}::uuid, ${accountId}::bigint, ${type}::text, ${JSON.stringify(data)}::jsonb
      WHERE EXISTS (SELECT 1 FROM subscribed)
      RETURNING id
    ), delivery AS (
      INSERT INTO webhook_delivery (account_id, webhook_id, event_id)
      SELECT ${accountId}::bigint, s.id, e.id FROM subscribed s CROSS JOIN event e
      RETURNING 1
    )
    SELECT count(*) AS count FROM delivery`.execute(tx.db)
  const deliveries = Number(rows[0]?.count ?? 0)
  if (deliveries > 0) tx.onCommit(deliveriesDue)
  return { id, deliveries }
}
