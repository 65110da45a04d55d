import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { RateLimitOutcome, RateLimitStore } from './rate-limit.js'

// The rate-limit counters of every server process on one database (docs/design.md section 8): fixed
// one-second windows in an unlogged table, one upsert per request, so that three processes behind
// a load balancer allow what one does. Finished windows are swept now and then by whichever
// process gets there; a sweep never holds up the request that starts it.

const SWEEP_EVERY_MS = 10_000

export class PostgresRateLimitStore implements RateLimitStore {
  private lastSweep = 0

  constructor(private readonly db: Db) {}

  async hit(key: string, limit: number, now: Date): Promise<RateLimitOutcome> {
    const windowStart = Math.floor(now.getTime() / 1000)
    const { rows } = await sql<{ hits: number }>`
      INSERT INTO rate_limit_window (key, window_start, hits) VALUES (${key}, ${windowStart}, 1)
      ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_window.hits + 1
      RETURNING hits`.execute(this.db)
    const hits = rows[0]?.hits ?? 1
    this.sweep(now.getTime(), windowStart)
    return { limit, observed: hits, remaining: Math.max(0, limit - hits), reset: windowStart + 1, allowed: hits <= limit }
  }

  private sweep(time: number, windowStart: number): void {
    if (time - this.lastSweep < SWEEP_EVERY_MS) return
    this.lastSweep = time
    // Windows a few seconds old: a process whose clock is slightly behind still finds its own.
    sql`DELETE FROM rate_limit_window WHERE window_start < ${windowStart - 5}`.execute(this.db).catch(() => {})
  }
}
