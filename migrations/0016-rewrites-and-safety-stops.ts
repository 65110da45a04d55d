import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- What an export wrote into the channel's spelling (issue 31): a bit per rewrite code of the
    -- template (info), beside issues' bits of what fails; null when nothing was rewritten. A row
    -- whose only bits are notes still refers to the import stage for its data (exported-data.ts).
    ALTER TABLE stage_product ADD COLUMN notes bigint;

    -- Safety stops (issue 31): an export that would shrink the delivered feed by more than
    -- safety_max_drop, or leave out more than safety_max_left_out of what it checked, is held
    -- once its baseline has safety_min_products; null turns a stop off. hold: the held export
    -- (its run, its figures, what it was made from) until it is released or a later export passes.
    ALTER TABLE channel
      ADD COLUMN safety_max_drop numeric DEFAULT 0.5 CHECK (safety_max_drop >= 0 AND safety_max_drop <= 1),
      ADD COLUMN safety_max_left_out numeric DEFAULT 0.5 CHECK (safety_max_left_out >= 0 AND safety_max_left_out <= 1),
      ADD COLUMN safety_min_products integer DEFAULT 100 CHECK (safety_min_products >= 0),
      ADD COLUMN hold jsonb;
    CREATE INDEX channel_held_idx ON channel (account_id) WHERE hold IS NOT NULL;

    -- A run's exports (held, or leaving products out, make it a success with warnings in the
    -- console), found by the run's pid.
    CREATE INDEX channel_export_pid_idx ON channel_export (pid);
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX channel_export_pid_idx;
    DROP INDEX channel_held_idx;
    ALTER TABLE channel DROP COLUMN safety_max_drop, DROP COLUMN safety_max_left_out, DROP COLUMN safety_min_products, DROP COLUMN hold;
    ALTER TABLE stage_product DROP COLUMN notes;
  `.execute(db)
}
