import { setTimeout as sleep } from 'node:timers/promises'

/** How a wait is described and bounded. */
export interface Patience {
  /** What is waited for: the error names it. */
  what: string
  /** Pause between two checks (default 50 ms). */
  intervalMs?: number
  /** When to give up (default 20 s): a bound for a broken build, never a measurement of this one. */
  withinMs?: number
  /** Anything more the error should say (a child process's output, say). */
  detail?: () => string
}

const DEFAULT_INTERVAL_MS = 50
const DEFAULT_WITHIN_MS = 20_000

/**
 * The one polling helper of the tests: checks until `check` gives a value, then returns it. `undefined`
 * and `false` mean "not yet"; a check that throws ends the wait with its error (a server that exited,
 * an unexpected status). Work that follows a run or a request (a delivery, a run's end, a server that
 * is listening) is waited for through what can be observed of it, never by sleeping a fixed time.
 *
 *   const request = await eventually(async () => receiver.received[0], 'the delivery')
 *   await eventually(async () => (await openTransactions(t)).length === 0, { what: 'the server to settle', withinMs: 60_000 })
 */
export async function eventually<T>(check: () => Promise<T | undefined | false>, patience: string | Patience): Promise<T> {
  const { what, intervalMs = DEFAULT_INTERVAL_MS, withinMs = DEFAULT_WITHIN_MS, detail } = typeof patience === 'string' ? { what: patience } : patience
  const deadline = Date.now() + withinMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() >= deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}${detail ? `\n${detail()}` : ''}`)
    await sleep(intervalMs)
  }
}
