import { sql } from 'kysely'
import type { Db } from '../db/database.js'

/**
 * The hourly upkeep: deliveries left pending by a subscription that stayed inactive past their retry
 * window are failed (they would only be failed unsent on activation); ended deliveries are deleted
 * a week after they ended, and events once no delivery names them.
 */
export async function purgeWebhookHistory(db: Db, windowSeconds: number, olderThanDays = 7): Promise<{ expired: number; deliveries: number; events: number }> {
  const expired = await db
    .updateTable('webhook_delivery as d')
    .set({
      status: 'failed',
      next_attempt_at: null,
      finished_at: sql<Date>`now()`,
      last_error: 'not delivered within its retry window: the webhook was inactive; it can be retried',
    })
    .where('d.status', '=', 'pending')
    .where(sql<boolean>`coalesce(d.retry_until, d.created_at + make_interval(secs => ${windowSeconds})) < now()`)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook as w')
            .select('w.id')
            .whereRef('w.id', '=', 'd.webhook_id')
            .whereRef('w.account_id', '=', 'd.account_id')
            .where('w.active', '=', true),
        ),
      ),
    )
    .executeTakeFirst()
  const cutoff = sql<Date>`now() - make_interval(days => ${olderThanDays})`
  const deliveries = await db.deleteFrom('webhook_delivery').where('status', '<>', 'pending').where('finished_at', '<', cutoff).executeTakeFirst()
  const events = await db
    .deleteFrom('webhook_event as e')
    .where('e.created_at', '<', cutoff)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('webhook_delivery as d').select('d.id').whereRef('d.event_id', '=', 'e.id').whereRef('d.account_id', '=', 'e.account_id'))),
    )
    .executeTakeFirst()
  return { expired: Number(expired.numUpdatedRows), deliveries: Number(deliveries.numDeletedRows), events: Number(events.numDeletedRows) }
}
