import { counted } from '../input/text-input.js'
import { sql } from 'kysely'
import type { Db, DbHandle } from '../db/database.js'
import type { WebhookDelivery } from '../db/schema.js'
import { claimUnderLock, fairlyDueIds, heldByClaim, secondsFromNow, type ClaimLimits } from '../db/leased-claims.js'
import { inTransaction } from '../db/transaction.js'

// The delivery worker's side of the outbox. A claimed delivery stays `pending` under a lease
// (locked_until): a process that dies mid-attempt leaves it to be claimed again when the lease
// ends, so an event is delivered at least once, and its webhook-id lets the receiver deduplicate.

export type ClaimedDelivery = WebhookDelivery & {
  url: string
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: Date | null
  event_type: string
  payload: Record<string, unknown>
  event_created_at: Date
  /** Its retry window ended before this claim (the subscription was inactive, say): it is failed unsent. */
  expired: boolean
}

export interface DeliveryClaimLimits extends ClaimLimits {
  /** WEBHOOK_RETRY_HOURS in seconds: the window of a delivery that has no retry_until of its own. */
  windowSeconds: number
}

// The transaction lock that serialises delivery claims (claimUnderLock).
const CLAIM_LOCK = 'catalog.webhook_delivery.claim'

/** Only deliveries of an active subscription are sent; the others wait for it to be enabled again. */
const subscribed = sql<boolean>`EXISTS (SELECT 1 FROM webhook v WHERE v.id = x.webhook_id AND v.account_id = x.account_id AND v.active)`

/**
 * Takes up to `limit` due deliveries in one statement, fairly between accounts (fairlyDueIds): one
 * account's backlog or slow receiver never holds another's deliveries back.
 */
export async function claimDeliveries(db: Db, limits: DeliveryClaimLimits): Promise<ClaimedDelivery[]> {
  if (limits.limit <= 0) return []
  return claimUnderLock(db, CLAIM_LOCK, async (trx) => {
    const { rows } = await sql<ClaimedDelivery>`
      UPDATE webhook_delivery d SET
        locked_until = ${secondsFromNow(limits.leaseSeconds)},
        attempts = d.attempts + 1,
        last_attempt_at = now()
      FROM webhook w, webhook_event e
      WHERE d.id IN (${fairlyDueIds('webhook_delivery', { ...limits, eligible: subscribed })})
        AND w.id = d.webhook_id AND w.account_id = d.account_id
        AND e.id = d.event_id AND e.account_id = d.account_id
      RETURNING d.*, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at,
        e.type AS event_type, e.payload, e.created_at AS event_created_at,
        coalesce(d.retry_until, d.created_at + make_interval(secs => ${limits.windowSeconds})) < now() AS expired`.execute(trx)
    return rows
  })
}

/** Only the claim that holds the delivery (`pending` under a lease) may end it: a process given up for dead that still finishes is ignored. */
const ours = (db: DbHandle, delivery: ClaimedDelivery) => db.updateTable('webhook_delivery').where(heldByClaim(delivery))

export interface AttemptOutcome {
  status: number | null
  error: string | null
  body: string | null
}

/** A 2xx: the delivery is done, and the subscription's failure streak ends. */
export async function markDelivered(db: Db, delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
  await inTransaction(db, async ({ db: trx }) => {
    const ended = await ours(trx, delivery)
      .set({
        status: 'delivered',
        locked_until: null,
        next_attempt_at: null,
        finished_at: sql<Date>`now()`,
        last_response_code: outcome.status,
        last_error: null,
        response_body: outcome.body,
      })
      .executeTakeFirst()
    if (ended.numUpdatedRows === 0n) return
    await trx
      .updateTable('webhook')
      .set({ consecutive_failures: 0, failing_since: null })
      .where('account_id', '=', delivery.account_id)
      .where('id', '=', delivery.webhook_id)
      .where((eb) => eb.or([eb('consecutive_failures', '>', 0), eb('failing_since', 'is not', null)]))
      .execute()
  })
}

export interface FailurePolicy {
  /** Wait before the next attempt. */
  delaySeconds: number
  /** WEBHOOK_RETRY_HOURS in seconds. */
  windowSeconds: number
  /** WEBHOOK_DISABLE_AFTER_FAILURES. */
  disableAfter: number
}

/** What became of a delivery after a failed attempt: `pending` with its next attempt's time, or `failed` for good. */
export interface FailedAttempt {
  status: 'pending' | 'failed'
  nextAttemptAt: Date | null
  /** Whether the subscription was disabled now. */
  disabled: boolean
}

/**
 * A failed attempt: another one after the delay while that is within the delivery's window, else
 * the delivery has failed. The subscription's streak grows; it is disabled, with the reason, after
 * `disableAfter` failures in a row, or when a delivery failed for good with nothing delivered since
 * the streak began a whole window ago. Returns nothing when the claim no longer held the delivery.
 */
export async function markAttemptFailed(db: Db, delivery: ClaimedDelivery, outcome: AttemptOutcome, policy: FailurePolicy): Promise<FailedAttempt | undefined> {
  return inTransaction(db, async ({ db: trx }) => {
    const giveUpAt = sql<Date>`coalesce(retry_until, created_at + make_interval(secs => ${policy.windowSeconds}))`
    const next = secondsFromNow(policy.delaySeconds)
    const ended = await ours(trx, delivery)
      .set({
        status: sql`CASE WHEN ${next} > ${giveUpAt} THEN 'failed' ELSE 'pending' END`,
        next_attempt_at: sql`CASE WHEN ${next} > ${giveUpAt} THEN NULL ELSE ${next} END`,
        finished_at: sql`CASE WHEN ${next} > ${giveUpAt} THEN now() END`,
        locked_until: null,
        last_response_code: outcome.status,
        last_error: outcome.error?.slice(0, 500) ?? null,
        response_body: outcome.body,
      })
      .returning(['status', 'next_attempt_at'])
      .executeTakeFirst()
    if (!ended) return undefined
    const attempt = { status: ended.status === 'failed' ? ('failed' as const) : ('pending' as const), nextAttemptAt: ended.next_attempt_at, disabled: false }
    const streak = await trx
      .updateTable('webhook')
      .set({ consecutive_failures: sql`consecutive_failures + 1`, failing_since: sql`coalesce(failing_since, now())` })
      .where('account_id', '=', delivery.account_id)
      .where('id', '=', delivery.webhook_id)
      .returning([
        'consecutive_failures',
        'failing_since',
        'active',
        sql<boolean>`failing_since <= now() - make_interval(secs => ${policy.windowSeconds})`.as('long'),
      ])
      .executeTakeFirst()
    if (!streak?.active) return attempt
    const tooMany = streak.consecutive_failures >= policy.disableAfter
    const gaveUp = ended.status === 'failed' && streak.long
    if (!tooMany && !gaveUp) return attempt
    const since = streak.failing_since?.toISOString() ?? 'now'
    const reason =
      `Disabled after ${counted(streak.consecutive_failures, 'failed delivery attempt')} in a row ` +
      `(failing since ${since}; the last: ${outcome.error ?? 'no answer'}). Fix the receiver, then activate the webhook again ` +
      `(PUT with "active": true); failed deliveries can be retried`
    await trx
      .updateTable('webhook')
      .set({ active: false, disabled_reason: reason, disabled_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
      .where('account_id', '=', delivery.account_id)
      .where('id', '=', delivery.webhook_id)
      .execute()
    return { ...attempt, disabled: true }
  })
}

/** A delivery whose window ended before it could be tried again: failed, unsent. */
export async function markExpired(db: DbHandle, delivery: ClaimedDelivery, windowHours: number): Promise<void> {
  await ours(db, delivery)
    .set({
      status: 'failed',
      attempts: sql`attempts - 1`,
      locked_until: null,
      next_attempt_at: null,
      finished_at: sql<Date>`now()`,
      last_error: `not delivered within its retry window of ${windowHours} h (the webhook was inactive or the service was busy); it can be retried`,
    })
    .execute()
}

/** Hands a delivery back untried (this process is stopping): the interrupted attempt does not count. */
export async function releaseDelivery(db: DbHandle, delivery: ClaimedDelivery): Promise<void> {
  await ours(db, delivery)
    .set({ attempts: sql`attempts - 1`, locked_until: null })
    .execute()
}
