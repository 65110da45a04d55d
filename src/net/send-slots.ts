/** How long a send waits for its answer before it gives its slot back (see SendSlots). */
export const SLOW_AFTER_MS = 1000

export interface SendSlotsOptions {
  /** Sends that may be starting, or waiting less than `slowAfterMs` for their answer, at once (…_CONCURRENCY); 0: none. */
  concurrency: number
  /** Sends open at once, slow ones included (…_MAX_OPEN); never fewer than `concurrency`. */
  maxOpen: number
  /** After this long without an answer a send is slow: it gives its slot back and waits on. */
  slowAfterMs?: number
  /** A slot came free because a send turned slow: the worker looks for more work. */
  onFree: () => void
}

/** The place of one send in its process's slots, from its claim to its end. */
export class SendSlot {
  private readonly controller = new AbortController()
  timer: NodeJS.Timeout | undefined
  sentAt = 0
  /** Why it was ended early, when SendSlots ended it to make room; undefined otherwise. */
  cutReason: string | undefined

  /** The send's signal: aborted when it is ended early to make room (`cutReason` says so) or when the worker stops. */
  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** Ends the send early; without a reason, it is handed back untried (the worker stops). */
  abort(reason?: string): void {
    this.cutReason ??= reason
    this.controller.abort()
  }
}

/**
 * The slots of one process for requests it sends on a tenant's behalf to servers it does not run
 * (feed pushes, webhook deliveries), shared by every account.
 *
 * Why a send gives its slot back after `slowAfterMs`: a server that accepts the connection and never
 * answers holds its request until the timeout (10 s for webhooks, 30 s for pushes). With a fixed
 * number of slots, enough such servers on enough accounts (each within its own per-account cap) held
 * them all and every other account waited for those timeouts; a reserve for accounts with nothing in
 * flight does not help, because the next hanging account has nothing in flight either until its own
 * request hangs, and whoever takes the reserve holds it for a whole timeout. Nothing tells a receiver
 * that will hang from a healthy one before it has been tried; only waiting does. So a slot is for
 * starting a send and for its first `slowAfterMs`: a send still unanswered then is slow, leaves its
 * slot to the next due send and waits on outside the slots. However many receivers hang, a slot comes
 * free within `slowAfterMs`, so another account's send starts within about that long, and the
 * timeout of every send stays what the operator set. What a slow send holds (a socket, a timer, a
 * file stream for a push) is bounded twice: by the per-account caps of the claims (so one tenant
 * holds at most that many), and by `maxOpen` per process: when a new send would open one too many,
 * the slow send that has waited longest is ended early, as a failed attempt that is retried like a
 * timeout. Only receivers far slower than `slowAfterMs` are ever ended early, and only while the
 * process has `maxOpen` sends open.
 */
export class SendSlots {
  private readonly starting = new Set<SendSlot>()
  /** Slow sends, the longest waiting first. */
  private readonly waiting: SendSlot[] = []
  private readonly maxOpen: number
  private readonly slowAfterMs: number

  constructor(private readonly options: SendSlotsOptions) {
    this.maxOpen = Math.max(options.maxOpen, options.concurrency)
    this.slowAfterMs = options.slowAfterMs ?? SLOW_AFTER_MS
  }

  /** Sends that may start now. */
  get free(): number {
    return Math.max(0, this.options.concurrency - this.starting.size)
  }

  /** Sends open now, slow ones included. */
  get open(): number {
    return this.starting.size + this.waiting.length
  }

  /** A slot for a send that was just claimed; throws when none is free (the caller claims at most `free`). */
  take(): SendSlot {
    if (this.free === 0) throw new Error('no free send slot')
    const slot = new SendSlot()
    this.starting.add(slot)
    // Room for it: at most one is needed, since the slots themselves never exceed maxOpen.
    while (this.open > this.maxOpen) {
      const longest = this.waiting.shift()
      if (!longest) break
      const seconds = Math.round((Date.now() - longest.sentAt) / 100) / 10
      longest.abort(`no response within ${seconds} s (ended early: ${this.maxOpen} requests were open, and this one had waited longest)`)
    }
    return slot
  }

  /** The request of the send goes out now: from here on, after `slowAfterMs` without an answer it gives its slot back. */
  sending(slot: SendSlot): void {
    if (!this.starting.has(slot) || slot.timer) return
    slot.sentAt = Date.now()
    slot.timer = setTimeout(() => {
      if (!this.starting.delete(slot)) return
      this.waiting.push(slot)
      this.options.onFree()
    }, this.slowAfterMs)
    slot.timer.unref()
  }

  /** Aborts every send open (the worker stops; they are handed back, not failed). */
  abortAll(): void {
    for (const slot of [...this.starting, ...this.waiting]) slot.abort()
  }

  /** The send ended (answered, failed, ended early or handed back). */
  release(slot: SendSlot): void {
    clearTimeout(slot.timer)
    this.starting.delete(slot)
    const at = this.waiting.indexOf(slot)
    if (at >= 0) this.waiting.splice(at, 1)
  }
}
