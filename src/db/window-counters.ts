import { sql } from 'kysely'
import type { Db } from './database.js'

// The one store of counters in fixed time windows: the rate limits' (one-second windows per
// credential and endpoint) and the failed authentications' (one-minute windows per address, and per
// address and credential). In Postgres whenever the server runs on a DATABASE_URL, so that every
// process behind a balancer counts together (three processes allow what one does); in memory for
// the embedded single process.

export interface WindowCount {
  count: number
  /** Unix time (ms) at which the window ends. */
  windowEnd: number
}

export interface WindowCounters {
  /** Adds `by` (0 reads) to `key`'s counter in the `windowMs` window around `now`; the count after it. */
  add(key: string, windowMs: number, now: Date, by?: number): Promise<WindowCount>
}

function windowOf(now: Date, windowMs: number): { start: number; end: number } {
  const time = now.getTime()
  const start = time - (time % windowMs)
  return { start, end: start + windowMs }
}

export class MemoryWindowCounters implements WindowCounters {
  private windows = new Map<string, { start: number; end: number; count: number }>()
  private lastSweep = 0

  async add(key: string, windowMs: number, now: Date, by = 1): Promise<WindowCount> {
    const { start, end } = windowOf(now, windowMs)
    this.sweep(now.getTime())
    let window = this.windows.get(key)
    if (window?.start !== start) {
      window = { start, end, count: 0 }
      if (by > 0) this.windows.set(key, window)
    }
    window.count += by
    return { count: window.count, windowEnd: end }
  }

  // Ended windows go now and then, so that the map does not grow with every key ever seen.
  private sweep(time: number): void {
    if (time - this.lastSweep < 10_000) return
    this.lastSweep = time
    for (const [key, window] of this.windows) if (window.end <= time) this.windows.delete(key)
  }
}

const SWEEP_EVERY_MS = 10_000

/**
 * Counters in an unlogged table, one upsert per count (`window_start`, `window_end` in seconds). Ended windows are
 * swept now and then by whichever process gets there; a sweep never holds up the count that starts it.
 */
export class PostgresWindowCounters implements WindowCounters {
  private lastSweep = 0

  constructor(private readonly db: Db) {}

  async add(key: string, windowMs: number, now: Date, by = 1): Promise<WindowCount> {
    const { start, end } = windowOf(now, windowMs)
    const windowStart = Math.floor(start / 1000)
    const { rows } =
      by === 0
        ? await sql<{ hits: number }>`SELECT hits FROM rate_limit_window WHERE key = ${key} AND window_start = ${windowStart}`.execute(this.db)
        : await sql<{ hits: number }>`
            INSERT INTO rate_limit_window (key, window_start, window_end, hits) VALUES (${key}, ${windowStart}, ${Math.floor(end / 1000)}, ${by})
            ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_window.hits + ${by}
            RETURNING hits`.execute(this.db)
    this.sweep(now.getTime())
    return { count: rows[0]?.hits ?? 0, windowEnd: end }
  }

  private sweep(time: number): void {
    if (time - this.lastSweep < SWEEP_EVERY_MS) return
    this.lastSweep = time
    // Windows ended a few seconds ago: a process whose clock is slightly behind still finds its own.
    const before = Math.floor(time / 1000) - 5
    sql`DELETE FROM rate_limit_window WHERE window_end < ${before}`.execute(this.db).catch(() => {})
  }
}
