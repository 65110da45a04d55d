import { TooManyRequestsError } from '../errors.js'
import type { Caller } from './authenticate.js'

// Failed authentications (missing, malformed, unknown or revoked credential) counted per caller
// address in fixed one-minute windows. The stream interface's rate limit counts per token, so every
// guessed token would get a counter of its own; this one counts per address, on both interfaces.
// Counters live in this process: N server processes behind a balancer allow N times the limit.

const WINDOW_MS = 60_000

export interface FailureCount {
  count: number
  /** Unix time (ms) at which the window ends. */
  windowEnd: number
}

export interface FailedAuthStore {
  /** Failures of `address` in the window around `now`. */
  failures(address: string, now: Date): FailureCount
  /** Counts one failure of `address` in the window around `now`. */
  addFailure(address: string, now: Date): void
}

export class MemoryFailedAuthStore implements FailedAuthStore {
  private windows = new Map<string, { start: number; count: number }>()
  private lastSweep = 0

  failures(address: string, now: Date): FailureCount {
    const start = windowStart(now)
    const window = this.windows.get(address)
    return { count: window?.start === start ? window.count : 0, windowEnd: start + WINDOW_MS }
  }

  addFailure(address: string, now: Date): void {
    const start = windowStart(now)
    this.sweep(start)
    const window = this.windows.get(address)
    if (window?.start === start) window.count++
    else this.windows.set(address, { start, count: 1 })
  }

  // Finished windows go now and then, so that the map does not grow with every address ever seen.
  private sweep(currentStart: number): void {
    if (currentStart === this.lastSweep) return
    this.lastSweep = currentStart
    for (const [address, window] of this.windows) if (window.start < currentStart) this.windows.delete(address)
  }
}

function windowStart(now: Date): number {
  const time = now.getTime()
  return time - (time % WINDOW_MS)
}

export class TooManyFailedAuthenticationsError extends TooManyRequestsError {
  constructor(retryAfterSeconds: number) {
    super(retryAfterSeconds, `Too many failed authentications from this address; try again in ${retryAfterSeconds} s`)
  }
}

export class FailedAuthLimit {
  constructor(
    private readonly store: FailedAuthStore,
    private readonly perMinute: number,
    private readonly clock: () => Date,
  ) {}

  /**
   * Runs `attempt` (the authentication) unless `address` already failed `perMinute` times in this
   * window: then it throws 429 without looking at the credential, until the window ends.
   */
  async authenticate(address: string, attempt: () => Promise<Caller | null>): Promise<Caller | null> {
    const now = this.clock()
    const { count, windowEnd } = this.store.failures(address, now)
    if (count >= this.perMinute) throw new TooManyFailedAuthenticationsError(Math.max(1, Math.ceil((windowEnd - now.getTime()) / 1000)))
    const caller = await attempt()
    if (!caller) this.store.addFailure(address, this.clock())
    return caller
  }
}
