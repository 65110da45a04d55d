import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Request counters of every server process, one row per key and one-second window (issue 14).
    -- Unlogged: a counter lost in a crash costs a client at most one second of its limit, and every
    -- request writes here.
    CREATE UNLOGGED TABLE rate_limit_window (
      key text NOT NULL,
      window_start bigint NOT NULL,
      hits integer NOT NULL,
      PRIMARY KEY (key, window_start)
    );
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE rate_limit_window`.execute(db)
}
