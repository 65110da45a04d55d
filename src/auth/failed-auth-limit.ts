import { TooManyRequestsError } from '../errors.js'
import type { AuthAttempt, Caller } from './authenticate.js'

// Failed authentications (missing, malformed, unknown or revoked credential) counted in fixed
// one-minute windows, on both interfaces, per caller address and per (address, public id of the
// credential presented). Counters live in this process: N server processes behind a balancer allow
// N times the limit.
//
// Why two counters (issue 21). Counting per address alone refused every request of an address over
// the limit, valid credentials included: behind a company's NAT one job with a revoked token stopped
// every integration of the company. A valid credential must never be refused because other clients
// at its address failed, yet guessing must stay throttled; the credential cannot simply be checked
// first, or a guesser would get unlimited checks. So credentials carry a public part that names
// them before the secret is checked: the client_id of an X-Auth-Token, the id in a personal access
// token (`cpat_<public id>_<secret>`). One that has one is checked unless its own (address, id)
// counter is over the limit: its neighbours' failures do not touch that counter, and guessing its
// secret from one address is throttled all the same. One without a public part (a legacy token
// `cpat_<secret>`, a malformed or missing header), or whose public id names no credential (a revoked
// token's included), is refused unchecked while its address is over the limit, so that inventing
// ids does not get a guesser out of the throttle. Valid credentials are never counted.

const WINDOW_MS = 60_000

export interface FailureCount {
  count: number
  /** Unix time (ms) at which the window ends. */
  windowEnd: number
}

export interface FailedAuthStore {
  /** Failures counted under `key` (an address, or an address and a public id) in the window around `now`. */
  failures(key: string, now: Date): FailureCount
  /** Counts one failure under `key` in the window around `now`. */
  addFailure(key: string, now: Date): void
}

export class MemoryFailedAuthStore implements FailedAuthStore {
  private windows = new Map<string, { start: number; count: number }>()
  private lastSweep = 0

  failures(key: string, now: Date): FailureCount {
    const start = windowStart(now)
    const window = this.windows.get(key)
    return { count: window?.start === start ? window.count : 0, windowEnd: start + WINDOW_MS }
  }

  addFailure(key: string, now: Date): void {
    const start = windowStart(now)
    this.sweep(start)
    const window = this.windows.get(key)
    if (window?.start === start) window.count++
    else this.windows.set(key, { start, count: 1 })
  }

  // Finished windows go now and then, so that the map does not grow with every key ever seen.
  private sweep(currentStart: number): void {
    if (currentStart === this.lastSweep) return
    this.lastSweep = currentStart
    for (const [key, window] of this.windows) if (window.start < currentStart) this.windows.delete(key)
  }
}

function windowStart(now: Date): number {
  const time = now.getTime()
  return time - (time % WINDOW_MS)
}

export class TooManyFailedAuthenticationsError extends TooManyRequestsError {
  constructor(retryAfterSeconds: number, of: 'address' | 'credential') {
    const whose = of === 'address' ? 'from this address' : 'of this credential from this address'
    super(retryAfterSeconds, `Too many failed authentications ${whose}; try again in ${retryAfterSeconds} s`)
  }
}

export class FailedAuthLimit {
  constructor(
    private readonly store: FailedAuthStore,
    private readonly perMinute: number,
    private readonly clock: () => Date,
  ) {}

  /**
   * Checks the credential of `attempt` unless the failures counted for it say not to (see the top of
   * this file): then it throws 429 without looking at the secret, until the window ends.
   */
  async authenticate(address: string, attempt: AuthAttempt): Promise<Caller | null> {
    const now = this.clock()
    const credentialKey = attempt.publicId === null ? null : `${address} ${attempt.publicId}`
    if (credentialKey !== null && this.isOver(credentialKey, now)) throw this.refusal(credentialKey, now, 'credential')
    const addressOver = this.isOver(address, now)
    if (addressOver && credentialKey === null) throw this.refusal(address, now, 'address')
    const { caller, knownPublicId } = await attempt.check()
    if (caller) return caller
    if (addressOver && !knownPublicId) throw this.refusal(address, now, 'address')
    this.countFailure(address, knownPublicId ? credentialKey : null)
    return null
  }

  private isOver(key: string, now: Date): boolean {
    return this.store.failures(key, now).count >= this.perMinute
  }

  private refusal(key: string, now: Date, of: 'address' | 'credential'): TooManyFailedAuthenticationsError {
    const { windowEnd } = this.store.failures(key, now)
    return new TooManyFailedAuthenticationsError(Math.max(1, Math.ceil((windowEnd - now.getTime()) / 1000)), of)
  }

  // Per public id only for ids that name a credential: invented ids add no counters.
  private countFailure(address: string, credentialKey: string | null): void {
    const now = this.clock()
    this.store.addFailure(address, now)
    if (credentialKey !== null) this.store.addFailure(credentialKey, now)
  }
}
