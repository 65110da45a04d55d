import { MemoryWindowCounters, type WindowCounters } from '../db/window-counters.js'
// Fixed one-second windows per key (credential + endpoint), as docs/interface.md section 8 describes,
// counted in the service's one store of window counters (src/db/window-counters.ts): in Postgres
// whenever the server runs on a DATABASE_URL, so that every process counts together, in memory for
// the embedded single process.

export interface RateLimitOutcome {
  limit: number
  observed: number
  remaining: number
  /** Unix time (seconds) at which the window resets. */
  reset: number
  allowed: boolean
}

export interface RateLimitStore {
  hit(key: string, limit: number, now: Date): Promise<RateLimitOutcome>
}

const WINDOW_MS = 1000

/** Rate limits counted in window counters (src/db/window-counters.ts): one count per request. */
export class CountedRateLimits implements RateLimitStore {
  constructor(private readonly counters: WindowCounters) {}

  async hit(key: string, limit: number, now: Date): Promise<RateLimitOutcome> {
    const { count, windowEnd } = await this.counters.add(key, WINDOW_MS, now)
    return { limit, observed: count, remaining: Math.max(0, limit - count), reset: Math.ceil(windowEnd / 1000), allowed: count <= limit }
  }
}

/** The embedded single process's rate limits, in its memory. */
export class MemoryRateLimitStore extends CountedRateLimits {
  constructor() {
    super(new MemoryWindowCounters())
  }
}

export interface RateLimits {
  products: number
  batches: number
  other: number
}

/**
 * Which counter a request uses: products and batches endpoints count per stream id, every other
 * endpoint counts on its own (method and route, a HEAD with its GET).
 */
export function rateLimitBucket(method: string, routeUrl: string, streamId: string | undefined, limits: RateLimits) {
  if (streamId !== undefined && /\/products(\/|$)/.test(routeUrl)) return { key: `products:${streamId}`, limit: limits.products }
  if (streamId !== undefined && /\/batches(\/|$)/.test(routeUrl)) return { key: `batches:${streamId}`, limit: limits.batches }
  return { key: endpointKey(method, routeUrl), limit: limits.other }
}

/** An endpoint as rate limits count it: a HEAD is the GET of the same route without its body. */
export function endpointKey(method: string, routeUrl: string): string {
  return `${method === 'HEAD' ? 'GET' : method} ${routeUrl}`
}

/** Who a rate-limit counter belongs to: the credential authentication resolved, else the caller's address. */
export function rateLimitSubject(caller: { accountId: string; credentialId: string } | null, address: string): string {
  return caller ? `account:${caller.accountId} ${caller.credentialId}` : `ip:${address}`
}
