import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { Db } from '../db/database.js'
import type { OutboundGuard } from '../net/outbound-guard.js'
import { onDeliveriesDue } from './delivery-signal.js'
import { deliveryMessage, type LinkBase } from './delivery-message.js'
import { claimDeliveries, markAttemptFailed, markDelivered, markExpired, releaseDelivery, type ClaimedDelivery, type FailedAttempt } from './delivery-store.js'
import { postJson, type PostResult } from './webhook-sender.js'
import { CoalescedWakes } from '../net/coalesced-wakes.js'
import { SendSlots, type SendSlot } from '../net/send-slots.js'

/** The lease outlasts an attempt (bounded by the timeout) by this much before others may take it. */
const LEASE_MARGIN_SECONDS = 30
/** No wait between two attempts is longer, however many failed before. */
const MAX_DELAY_SECONDS = 6 * 3600

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

/** Wait before attempt n + 1 after n failed ones: base × 2^(n-1), at most MAX_DELAY_SECONDS, ±20 % so that retries spread out. */
export function retryDelaySeconds(failedAttempts: number, baseSeconds: number, random = Math.random): number {
  const delay = Math.min(baseSeconds * 2 ** Math.max(0, failedAttempts - 1), MAX_DELAY_SECONDS)
  return delay * (0.8 + 0.4 * random())
}

/**
 * Sends the outbox's deliveries, one event per POST, outside the run queue. Deliveries are rows in
 * Postgres claimed with SKIP LOCKED, so every server process runs a worker and each delivery is sent
 * by one of them. A slow receiver holds its own account's attempts (WEBHOOK_ACCOUNT_CONCURRENCY),
 * and a process slot only for its first second: then the slot goes to the next due delivery
 * (SendSlots), so receivers that hang, on however many accounts, never hold another account's back.
 * It looks every `pollingSeconds`, and at once when this process committed an event.
 */
export class DeliveryWorker {
  private readonly inFlight = new Set<Promise<void>>()
  private timer: NodeJS.Timeout | undefined
  private unsubscribe: (() => void) | undefined
  private stopped = false
  private readonly wakes = new CoalescedWakes(
    () => this.fill(),
    (error) => this.log.warn({ err: error }, 'webhook delivery claim failed'),
  )
  private readonly slots: SendSlots

  constructor(
    private readonly db: Db,
    private readonly options: DeliveryWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.slots = new SendSlots({ concurrency: options.concurrency, maxOpen: options.maxOpen, onFree: () => this.wake() })
  }

  start(): void {
    if (this.options.concurrency === 0 || this.stopped) return
    this.unsubscribe = onDeliveriesDue(() => this.wake())
    this.timer = setInterval(() => this.wake(), this.options.pollingSeconds * 1000)
    this.timer.unref()
    this.wake()
  }

  /** Looks for due deliveries now; calls while a look is under way make it look once more. */
  wake(): void {
    if (this.options.concurrency === 0) return
    this.wakes.wake()
  }

  /** Aborts the attempts in flight and hands their deliveries back, so that shutdown does not wait on receivers. */
  async stop(): Promise<void> {
    this.stopped = true
    this.unsubscribe?.()
    clearInterval(this.timer)
    this.slots.abortAll()
    await this.wakes.stop()
    await Promise.allSettled([...this.inFlight])
  }

  private async fill(): Promise<void> {
    while (!this.stopped && this.slots.free > 0) {
      const claimed = await claimDeliveries(this.db, {
        limit: this.slots.free,
        accountConcurrency: this.options.accountConcurrency,
        leaseSeconds: this.options.timeoutSeconds + LEASE_MARGIN_SECONDS,
        windowSeconds: Math.round(this.options.retryHours * 3600),
      })
      if (claimed.length === 0) return
      for (const delivery of claimed) {
        const slot = this.slots.take()
        const task: Promise<void> = this.deliver(delivery, slot)
          .catch((error: unknown) =>
            this.log.warn({ err: error, delivery: delivery.id }, 'webhook delivery failed unexpectedly; it is taken again when its lease ends'),
          )
          .finally(() => {
            this.slots.release(slot)
            this.inFlight.delete(task)
            this.wake()
          })
        this.inFlight.add(task)
      }
    }
  }

  private async deliver(delivery: ClaimedDelivery, slot: SendSlot): Promise<void> {
    if (this.stopped) return releaseDelivery(this.db, delivery)
    if (delivery.expired) {
      await markExpired(this.db, delivery, this.options.retryHours)
      return this.log.warn({ ...deliveryFields(delivery), result: 'failed' }, 'webhook delivery expired unsent')
    }
    // The real time, whatever clock the app runs on: receivers check webhook-timestamp against theirs.
    const { headers, body } = deliveryMessage(delivery, new Date(), this.options.links)
    this.slots.sending(slot)
    let result = await postJson(delivery.url, headers, body, {
      guard: this.options.guard,
      timeoutMs: this.options.timeoutSeconds * 1000,
      signal: slot.signal,
    })
    if (result.aborted && (this.stopped || slot.cutReason === undefined)) return releaseDelivery(this.db, delivery)
    // Ended early to make room for another (WEBHOOK_MAX_OPEN): a failed attempt, retried like a timeout.
    if (result.aborted) result = { ...result, aborted: false, error: slot.cutReason ?? null }
    if (result.ok) return markDelivered(this.db, delivery, result)
    const failed = await markAttemptFailed(this.db, delivery, result, {
      delaySeconds: retryDelaySeconds(delivery.attempts, this.options.retryBaseSeconds),
      windowSeconds: Math.round(this.options.retryHours * 3600),
      disableAfter: this.options.disableAfter,
    })
    // Not ours any more (our lease ran out and another process took it): that process tells.
    if (failed) this.logFailedAttempt(delivery, result, failed)
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
