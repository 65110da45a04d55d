// Fixed one-second windows per key (credential + endpoint), as docs/interface.md section 8 describes.
// Two stores: this one in the process's memory (the embedded single process), and the Postgres one
// (postgres-rate-limit.ts) whenever the server runs on a DATABASE_URL, so that every process counts
// together. `hit` answers with a promise, so a store may ask the database.

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

export class MemoryRateLimitStore implements RateLimitStore {
  private windows = new Map<string, { start: number; count: number }>()
  private lastSweep = 0

  async hit(key: string, limit: number, now: Date): Promise<RateLimitOutcome> {
    const time = now.getTime()
    const start = time - (time % WINDOW_MS)
    this.sweep(start)
    let window = this.windows.get(key)
    if (!window || window.start !== start) {
      window = { start, count: 0 }
      this.windows.set(key, window)
    }
    window.count++
    const allowed = window.count <= limit
    return {
      limit,
      observed: window.count,
      remaining: Math.max(0, limit - window.count),
      reset: Math.ceil((start + WINDOW_MS) / 1000),
      allowed,
    }
  }

  // Drop finished windows now and then, so that the map does not grow with every key ever seen.
  private sweep(currentStart: number): void {
    if (currentStart - this.lastSweep < 10 * WINDOW_MS) return
    this.lastSweep = currentStart
    for (const [key, window] of this.windows) if (window.start < currentStart) this.windows.delete(key)
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
