import { TooManyRequestsError } from '../errors.js'
import type { AuthAttempt, Caller } from './authenticate.js'

// Failed authentications (missing, malformed, unknown or revoked credential) counted in fixed
// one-minute windows, on both interfaces, per caller address and per (address, public id of the
// credential presented). Counters live in this process: N server processes behind a balancer allow
// N times the limit.
//
// Why two counters (issue 21). Counting per address alone refused every request of an address over
// the limit, valid credentials included: behind a company's NAT one job with a revoked token (or a
// mistyped secret of the company's own client id) stopped every integration of the company. So a
// presented credential is always checked, and a valid one always passes: other clients' failures,
// at its address or with its own public id, never refuse it. A failure counts for its address and,
// when its public id names a credential (the client_id of an X-Auth-Token, the id in a personal
// access token `cpat_<public id>_<secret>`), for that (address, id) pair; past the limit of either,
// failures answer 429 instead of 401 until the window ends, so a guesser is told to stop and learns
// nothing from the answers. The check itself is one indexed lookup, and a secret holds 192+ random
// bits: answering 429 stops a guesser as well as refusing unchecked would, and refusing unchecked
// would refuse the valid credentials behind the same address. A request that presents no credential
// (no header, a malformed one) is refused unchecked while its address is over the limit.

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
   * Checks the credential of `attempt`: the caller when it is valid, whatever was counted. A failure
   * is counted (see the top of this file) and answers null (401), or 429 once its address or its
   * credential's public id has failed too often in this window.
   */
  async authenticate(address: string, attempt: AuthAttempt): Promise<Caller | null> {
    const now = this.clock()
    if (!attempt.presented && this.isOver(address, now)) throw this.refusal(address, now, 'address')
    const { caller, knownPublicId } = await attempt.check()
    if (caller) return caller
    const credentialKey = knownPublicId && attempt.publicId !== null ? `${address} ${attempt.publicId}` : null
    // Over the limit before this failure: the first `perMinute` failures of a window answer 401.
    const credentialOver = credentialKey !== null && this.isOver(credentialKey, now)
    const addressOver = this.isOver(address, now)
    this.countFailure(address, credentialKey)
    if (credentialOver) throw this.refusal(credentialKey, now, 'credential')
    if (addressOver) throw this.refusal(address, now, 'address')
    return null
  }

  private isOver(key: string, now: Date): boolean {
    return this.store.failures(key, now).count >= this.perMinute
  }

  private refusal(key: string, now: Date, of: 'address' | 'credential'): TooManyFailedAuthenticationsError {
    const { windowEnd } = this.store.failures(key, now)
    return new TooManyFailedAuthenticationsError(Math.max(1, Math.ceil((windowEnd - now.getTime()) / 1000)), of)
  }

  // Per public id only for ids that name a credential: invented ids add no counters of their own.
  private countFailure(address: string, credentialKey: string | null): void {
    const now = this.clock()
    this.store.addFailure(address, now)
    if (credentialKey !== null) this.store.addFailure(credentialKey, now)
  }
}
