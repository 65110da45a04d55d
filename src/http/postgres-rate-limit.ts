import type { Db } from '../db/database.js'
import { PostgresWindowCounters } from '../db/window-counters.js'
import { CountedRateLimits } from './rate-limit.js'

/** The rate limits of every server process on one database (docs/design.md section 8): one upsert per request. */
export class PostgresRateLimitStore extends CountedRateLimits {
  constructor(db: Db) {
    super(new PostgresWindowCounters(db))
  }
}
