import { describe, expect, it } from 'vitest'
import { pushBackoff } from '../../src/jobs/push-worker.js'
import { MAX_RETRY_DELAY_SECONDS, retryDelaySeconds } from '../../src/jobs/retry-backoff.js'
import { webhookBackoff } from '../../src/jobs/webhook-delivery-worker.js'

// The random number is the test's: 0.5 is the wait itself, 0 and 1 its two ends.
const middle = () => 0.5

describe('the retry back-off', () => {
  it('waits the base after the first failure, doubled after each further one, up to its cap', () => {
    const backoff = { baseSeconds: 3, maxSeconds: 20, jitter: 0 }
    expect([1, 2, 3, 4, 5].map((failed) => retryDelaySeconds(failed, backoff, middle))).toEqual([3, 6, 12, 20, 20])
    // Nothing failed yet counts as one failure: never less than the base.
    expect(retryDelaySeconds(0, backoff, middle)).toBe(3)
  })

  it('spreads the wait by its jitter either way, as the random number says', () => {
    const backoff = { baseSeconds: 10, maxSeconds: 100, jitter: 0.25 }
    expect(retryDelaySeconds(2, backoff, () => 0)).toBeCloseTo(15)
    expect(retryDelaySeconds(2, backoff, middle)).toBe(20)
    expect(retryDelaySeconds(2, backoff, () => 1)).toBeCloseTo(25)
  })

  it('of a push waits the configured base, then twice it, with no jitter', () => {
    for (const random of [() => 0, middle, () => 0.99]) {
      expect(retryDelaySeconds(1, pushBackoff(2), random)).toBe(2)
      expect(retryDelaySeconds(2, pushBackoff(2), random)).toBe(4)
      expect(retryDelaySeconds(2, pushBackoff(0.5), random)).toBe(1)
    }
  })

  it('of a webhook delivery spreads by ±20 % and never waits longer than 6 hours', () => {
    expect(retryDelaySeconds(3, webhookBackoff(30), () => 0)).toBeCloseTo(96)
    expect(retryDelaySeconds(3, webhookBackoff(30), () => 1)).toBeCloseTo(144)
    expect(retryDelaySeconds(40, webhookBackoff(30), middle)).toBe(MAX_RETRY_DELAY_SECONDS)
    expect(MAX_RETRY_DELAY_SECONDS).toBe(6 * 3600)
  })
})
