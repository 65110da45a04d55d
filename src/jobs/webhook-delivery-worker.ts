import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { Db } from '../db/database.js'
import { guardedPost, type PostResult } from '../net/guarded-post.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import { onDeliveriesDue } from '../webhooks/delivery-signal.js'
import { deliveryMessage, type LinkBase } from '../webhooks/delivery-message.js'
import {
  claimDeliveries,
  markAttemptFailed,
  markDelivered,
  markExpired,
  releaseDelivery,
  type ClaimedDelivery,
  type FailedAttempt,
} from '../webhooks/delivery-store.js'
import { LeasedClaimWorker, type ClaimSource, type SendTurn } from './leased-claim-worker.js'
import { MAX_RETRY_DELAY_SECONDS, retryDelaySeconds, type RetryBackoff } from './retry-backoff.js'

/** What is kept of a receiver's answer: its first KiB. */
export const RESPONSE_BODY_BYTES = 1024

export interface DeliveryWorkerOptions {
  /** Attempts this process starts at once (WEBHOOK_CONCURRENCY); 0 sends none. One unanswered for a second gives its slot back. */
  concurrency: number
  /** Attempts this process keeps open at once, slow ones included (WEBHOOK_MAX_OPEN). */
  maxOpen: number
  /** Attempts of one account in flight at once across every process (WEBHOOK_ACCOUNT_CONCURRENCY). */
  accountConcurrency: number
  /** Limit of one POST (WEBHOOK_TIMEOUT_SECONDS). */
  timeoutSeconds: number
  /** How often the outbox is looked at for due deliveries besides the wake-ups (WEBHOOK_POLL_SECONDS). */
  pollingSeconds: number
  /** The first retry's delay (WEBHOOK_RETRY_BASE_SECONDS), doubled for each further one. */
  retryBaseSeconds: number
  /** How long a delivery is tried (WEBHOOK_RETRY_HOURS). */
  retryHours: number
  /** WEBHOOK_DISABLE_AFTER_FAILURES. */
  disableAfter: number
  guard: OutboundGuard
  links: LinkBase
}

/** The worker's options as the operator set them. */
export function deliveryWorkerOptions(config: Config, guard: OutboundGuard): DeliveryWorkerOptions {
  return {
    concurrency: config.WEBHOOK_CONCURRENCY,
    maxOpen: config.WEBHOOK_MAX_OPEN,
    accountConcurrency: config.WEBHOOK_ACCOUNT_CONCURRENCY,
    timeoutSeconds: config.WEBHOOK_TIMEOUT_SECONDS,
    pollingSeconds: config.WEBHOOK_POLL_SECONDS,
    retryBaseSeconds: config.WEBHOOK_RETRY_BASE_SECONDS,
    retryHours: config.WEBHOOK_RETRY_HOURS,
    disableAfter: config.WEBHOOK_DISABLE_AFTER_FAILURES,
    guard,
    links: { publicUrl: config.PUBLIC_URL, streamPrefix: config.STREAM_PREFIX },
  }
}

/** The wait before a delivery's next attempt: ±20 %, so that the retries of many failures at once spread out. */
export function webhookBackoff(baseSeconds: number): RetryBackoff {
  return { baseSeconds, maxSeconds: MAX_RETRY_DELAY_SECONDS, jitter: 0.2 }
}

/**
 * Sends the outbox's deliveries, one event per POST, outside the run queue (LeasedClaimWorker). It
 * looks every `pollingSeconds`, and at once when this process committed an event.
 */
export function createDeliveryWorker(db: Db, options: DeliveryWorkerOptions, log: FastifyBaseLogger): LeasedClaimWorker<ClaimedDelivery> {
  return new LeasedClaimWorker(new DeliverySender(db, options, log), { ...options, subscribe: onDeliveriesDue }, log)
}

/** The deliveries as the worker claims and sends them. */
class DeliverySender implements ClaimSource<ClaimedDelivery> {
  readonly name = 'webhook delivery'
  private readonly windowSeconds: number

  constructor(
    private readonly db: Db,
    private readonly options: DeliveryWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.windowSeconds = Math.round(options.retryHours * 3600)
  }

  claim(limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
    return claimDeliveries(this.db, { limit, leaseSeconds, accountConcurrency: this.options.accountConcurrency, windowSeconds: this.windowSeconds })
  }

  release(delivery: ClaimedDelivery): Promise<void> {
    return releaseDelivery(this.db, delivery)
  }

  logFields(delivery: ClaimedDelivery): Record<string, unknown> {
    return deliveryFields(delivery)
  }

  async send(delivery: ClaimedDelivery, turn: SendTurn): Promise<void> {
    if (delivery.expired) {
      await markExpired(this.db, delivery, this.options.retryHours)
      return this.log.warn({ ...deliveryFields(delivery), result: 'failed' }, 'webhook delivery expired unsent')
    }
    const result = await this.attempt(delivery, turn)
    if (result === undefined) return releaseDelivery(this.db, delivery)
    if (result.ok) return markDelivered(this.db, delivery, result)
    const failed = await markAttemptFailed(this.db, delivery, result, {
      delaySeconds: retryDelaySeconds(delivery.attempts, webhookBackoff(this.options.retryBaseSeconds)),
      windowSeconds: this.windowSeconds,
      disableAfter: this.options.disableAfter,
    })
    // Not ours any more (our lease ran out and another process took it): that process tells.
    if (failed) this.logFailedAttempt(delivery, result, failed)
  }

  /** One POST; undefined when it was handed back (the worker stops). */
  private async attempt(delivery: ClaimedDelivery, turn: SendTurn): Promise<PostResult | undefined> {
    // The real time, whatever clock the app runs on: receivers check webhook-timestamp against theirs.
    const { headers, body } = deliveryMessage(delivery, new Date(), this.options.links)
    turn.sending()
    const result = await guardedPost({
      url: delivery.url,
      headers: { 'content-type': 'application/json', ...headers },
      body: Buffer.from(body, 'utf8'),
      guard: this.options.guard,
      timeoutMs: this.options.timeoutSeconds * 1000,
      signal: turn.signal,
      keepResponseBytes: RESPONSE_BODY_BYTES,
    })
    if (result.ok || result.kind !== 'aborted') return result
    // Ended early to make room for another (WEBHOOK_MAX_OPEN): a failed attempt, retried like a timeout.
    const cut = turn.cutReason
    return cut === undefined ? undefined : { ...result, kind: 'timeout', error: cut }
  }

  /** A warning for every failed attempt: what went wrong (the receiver's status code, or our own words) and what comes next. */
  private logFailedAttempt(delivery: ClaimedDelivery, result: PostResult, failed: FailedAttempt): void {
    this.log.warn(
      {
        ...deliveryFields(delivery),
        attempt: delivery.attempts,
        statusCode: result.status ?? undefined,
        error: result.error,
        result: failed.status === 'failed' ? 'failed' : 'retrying',
        nextAttemptAt: failed.nextAttemptAt?.toISOString(),
        disabled: failed.disabled || undefined,
      },
      'webhook delivery attempt failed',
    )
    if (failed.disabled) this.log.info({ webhook: delivery.webhook_id, account: delivery.account_id }, 'webhook disabled after failed deliveries')
  }
}

/**
 * Who a delivery's lines are about. The receiver's URL is left out (it may hold a token); an event
 * of a run (run.*, batch.processed and export.finished by an import or export) carries its `pid`,
 * so that the run's grep finds its deliveries too.
 */
function deliveryFields(delivery: ClaimedDelivery): Record<string, unknown> {
  const pid = delivery.payload.pid
  return {
    account: delivery.account_id,
    webhook: delivery.webhook_id,
    delivery: delivery.id,
    event: delivery.event_id,
    eventType: delivery.event_type,
    pid: typeof pid === 'string' ? pid : undefined,
  }
}
