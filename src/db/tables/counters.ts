import type { Generated } from 'kysely'

// Window counters of rate limits and failed authentications (src/db/window-counters.ts).

/** Request counters of every process (PostgresRateLimitStore). */
export interface RateLimitWindowTable {
  key: string
  window_start: string
  window_end: Generated<string>
  hits: number
}
