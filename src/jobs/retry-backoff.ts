/** How the wait before another attempt grows (of a push, of a webhook delivery). */
export interface RetryBackoff {
  /** The wait after the first failed attempt (PUSH_RETRY_BASE_SECONDS, WEBHOOK_RETRY_BASE_SECONDS); doubled after each further one. */
  baseSeconds: number
  /** No wait is longer, however many attempts failed before. */
  maxSeconds: number
  /** The wait is spread by up to this fraction either way (0.2: ±20 %), so that retries of many failures at once spread out. */
  jitter: number
}

/** No wait is longer than this (6 h), whatever the base: a receiver back after a long outage is tried again within it. */
export const MAX_RETRY_DELAY_SECONDS = 6 * 3600

/**
 * The wait before attempt n + 1 after n failed ones: base × 2^(n-1), at most `maxSeconds`, then
 * spread by ±`jitter` with `random` (Math.random unless a test gives one: 0.5 is the wait itself).
 */
export function retryDelaySeconds(failedAttempts: number, backoff: RetryBackoff, random: () => number = Math.random): number {
  const delay = Math.min(backoff.baseSeconds * 2 ** Math.max(0, failedAttempts - 1), backoff.maxSeconds)
  return delay * (1 - backoff.jitter + 2 * backoff.jitter * random())
}
