import type { FastifyBaseLogger } from 'fastify'
import { settlesWithin } from '../db/connect.js'
import { CoalescedWakes } from '../net/coalesced-wakes.js'
import { SendSlots, type SendSlot } from '../net/send-slots.js'

/** The lease outlasts an attempt (bounded by the timeout) by this much before others may take it. */
export const LEASE_MARGIN_SECONDS = 30

/** What the worker gives one attempt: its signal and its place in the process's slots. */
export interface SendTurn {
  /** Aborted when the worker stops, or when the attempt is ended early to make room (`cutReason`). */
  readonly signal: AbortSignal
  /** The request goes out now: unanswered for a second from here, it gives its slot to the next (SendSlots). */
  sending(): void
  /**
   * Why the attempt was ended early to make room for another (…_MAX_OPEN): a failed attempt, retried
   * like a timeout. Undefined when it was not, or when the worker stops: an aborted attempt is then
   * handed back untried (`release`).
   */
  readonly cutReason: string | undefined
}

/** The rows one worker claims and works on (site runs, feed pushes, webhook deliveries), as the worker uses them. */
export interface ClaimSource<Item> {
  /** What log lines call one item: `push`, `webhook delivery`. */
  readonly name: string
  /** Claims up to `limit` due items, each under a lease (pushes and deliveries: `leaseSeconds`; runs: their heartbeat). */
  claim(limit: number, leaseSeconds: number): Promise<Item[]>
  /** Makes one attempt and records how it ended. What it throws leaves the item to be claimed again when its lease ends (a run: by the stale-run sweep). */
  send(item: Item, turn: SendTurn): Promise<void>
  /** Hands a claimed item back untried (this process is stopping): the attempt does not count. */
  release(item: Item): Promise<void>
  /** Who an item's log lines are about. */
  logFields(item: Item): Record<string, unknown>
}

export interface LeasedClaimWorkerOptions {
  /** Attempts this process starts at once (…_CONCURRENCY); 0 sends none. One unanswered for a second gives its slot back. */
  concurrency: number
  /** Attempts this process keeps open at once, slow ones included (…_MAX_OPEN). */
  maxOpen: number
  /** Limit of one attempt (…_TIMEOUT_SECONDS): the lease lasts LEASE_MARGIN_SECONDS longer. */
  timeoutSeconds: number
  /** How often the table is looked at for due items. */
  pollingSeconds: number
  /** Wake-ups besides the polling (an event committed in this process); returns the unsubscribe. */
  subscribe?: (wake: () => void) => () => void
}

/**
 * Works on rows claimed from Postgres: site runs (src/jobs/run-queue.ts), and feed pushes and webhook
 * deliveries, which it sends to servers the service does not run. The rows are claimed with SKIP
 * LOCKED under a lease, so every server process runs a worker, each row is taken by one of them, and
 * one whose process died is taken again when its lease runs out. A slow receiver holds its own
 * account's attempts (the claim's per-account cap), and a process slot only for its first second
 * (`sending`): then the slot goes to the next due item (SendSlots), so receivers that hang, on however
 * many accounts, never hold another account's back. A run never calls `sending`: it keeps its slot.
 */
export class LeasedClaimWorker<Item> {
  private readonly inFlight = new Set<Promise<void>>()
  private timer: NodeJS.Timeout | undefined
  private unsubscribe: (() => void) | undefined
  private stopped = false
  private readonly wakes: CoalescedWakes
  private readonly slots: SendSlots

  constructor(
    private readonly source: ClaimSource<Item>,
    private readonly options: LeasedClaimWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.wakes = new CoalescedWakes(
      () => this.fill(),
      (error) => log.warn({ err: error }, `${source.name} claim failed`),
    )
    this.slots = new SendSlots({ concurrency: options.concurrency, maxOpen: options.maxOpen, onFree: () => this.wake() })
  }

  start(): void {
    if (this.options.concurrency === 0 || this.stopped) return
    this.unsubscribe = this.options.subscribe?.(() => this.wake())
    this.timer = setInterval(() => this.wake(), this.options.pollingSeconds * 1000)
    this.timer.unref()
    this.wake()
  }

  /** Looks for due items now; calls while a look is under way make it look once more. */
  wake(): void {
    if (this.options.concurrency === 0) return
    this.wakes.wake()
  }

  /**
   * Claims nothing more, lets the attempts in flight finish for up to `graceMs`, then aborts them and
   * waits until they have ended: an aborted send hands its item back. Sends stop at once (a grace of
   * 0), so that shutdown does not wait on remote servers. Runs get the shutdown's drain time and do
   * not heed the abort: the shutdown ends their sessions (src/server.ts), and then they end.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopped = true
    this.unsubscribe?.()
    clearInterval(this.timer)
    if (graceMs > 0) await settlesWithin(Promise.allSettled([...this.inFlight]), graceMs)
    this.slots.abortAll()
    await this.wakes.stop()
    await Promise.allSettled([...this.inFlight])
  }

  private async fill(): Promise<void> {
    const leaseSeconds = this.options.timeoutSeconds + LEASE_MARGIN_SECONDS
    while (!this.stopped && this.slots.free > 0) {
      const claimed = await this.source.claim(this.slots.free, leaseSeconds)
      if (claimed.length === 0) return
      if (this.stopped) {
        await Promise.all(claimed.map((item) => this.source.release(item)))
        return
      }
      for (const item of claimed) this.begin(item)
    }
  }

  /** One attempt in a slot of its own, until it ends; then the slot is free and the worker looks again. */
  private begin(item: Item): void {
    const slot = this.slots.take()
    const task: Promise<void> = this.source
      .send(item, this.turn(slot))
      .catch((error: unknown) =>
        this.log.warn({ err: error, ...this.source.logFields(item) }, `${this.source.name} failed unexpectedly; it is taken again when its lease ends`),
      )
      .finally(() => {
        this.slots.release(slot)
        this.inFlight.delete(task)
        this.wake()
      })
    this.inFlight.add(task)
  }

  private turn(slot: SendSlot): SendTurn {
    const isStopped = () => this.stopped
    return {
      signal: slot.signal,
      sending: () => this.slots.sending(slot),
      get cutReason() {
        return isStopped() ? undefined : slot.cutReason
      },
    }
  }
}
