import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The one store of window counters (issue 36): the rate limits' one-second windows and the failed
    -- authentications' one-minute ones share the table; each row says when its window ends, which
    -- is what a sweep needs. Rows from before (one-second windows) have ended: 0 sweeps them.
    ALTER TABLE rate_limit_window ADD COLUMN window_end bigint NOT NULL DEFAULT 0;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE rate_limit_window DROP COLUMN window_end`.execute(db)
}
