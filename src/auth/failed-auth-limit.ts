import type { WindowCount, WindowCounters } from '../db/window-counters.js'
import { TooManyRequestsError } from '../errors.js'
import type { AuthAttempt, Caller } from './authenticate.js'

// Failed authentications (missing, malformed, unknown or revoked credential) counted in fixed
// one-minute windows, on both interfaces, per caller address and per (address, public id of the
// credential presented). The counters are the service's window counters (src/db/window-counters.ts):
// in Postgres on a DATABASE_URL, so that N server processes behind a balancer allow the limit once.
//
// Why two counters. Counting per address alone refused every request of an address over
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

export class TooManyFailedAuthenticationsError extends TooManyRequestsError {
  constructor(retryAfterSeconds: number, of: 'address' | 'credential') {
    const whose = of === 'address' ? 'from this address' : 'of this credential from this address'
    super(retryAfterSeconds, `Too many failed authentications ${whose}; try again in ${retryAfterSeconds} s`)
  }
}

export class FailedAuthLimit {
  constructor(
    private readonly counters: WindowCounters,
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
    if (!attempt.presented) {
      const counted = await this.failures(address, now, 0)
      if (counted.count >= this.perMinute) throw this.refusal(counted, now, 'address')
    }
    const { caller, knownPublicId } = await attempt.check()
    if (caller) return caller
    // Per public id only for ids that name a credential: invented ids add no counters of their own.
    const credentialKey = knownPublicId && attempt.publicId !== null ? `${address} ${attempt.publicId}` : null
    // Each counter counts the failure and answers its count in one statement (every process counting
    // at once sees distinct counts). Over the limit before this failure: the first `perMinute`
    // failures of a window answer 401.
    const ofCredential = credentialKey === null ? undefined : await this.failures(credentialKey, now, 1)
    const ofAddress = await this.failures(address, now, 1)
    if (ofCredential && ofCredential.count - 1 >= this.perMinute) throw this.refusal(ofCredential, now, 'credential')
    if (ofAddress.count - 1 >= this.perMinute) throw this.refusal(ofAddress, now, 'address')
    return null
  }

  private refusal({ windowEnd }: WindowCount, now: Date, of: 'address' | 'credential'): TooManyFailedAuthenticationsError {
    return new TooManyFailedAuthenticationsError(Math.max(1, Math.ceil((windowEnd - now.getTime()) / 1000)), of)
  }

  /** The failures counted under `key` (an address, or an address and a public id) in this minute, after adding `by`. */
  private failures(key: string, now: Date, by: number): Promise<WindowCount> {
    return this.counters.add(`auth ${key}`, WINDOW_MS, now, by)
  }
}
