import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Runs are claimed from this table under a lease the heartbeat renews, as pushes and webhook
    -- deliveries are claimed from theirs: pg-boss, which carried a job per admitted run, is gone.
    -- admitted_at: the run may start now (its site's and its account's turn). claimed_at: the
    -- current attempt's start; NULL while no attempt holds the run (queued, or handed back for its
    -- retry while its status still says running).
    ALTER TABLE run ADD COLUMN admitted_at timestamptz;
    ALTER TABLE run ADD COLUMN claimed_at timestamptz;
    UPDATE run SET admitted_at = created_at WHERE job_id IS NOT NULL AND status IN ('queued', 'running');
    -- A run running at the upgrade is stale at once and is retried or given up by the sweep.
    UPDATE run SET claimed_at = coalesce(heartbeat_at, now()) WHERE status = 'running';
    ALTER TABLE run DROP COLUMN job_id;
    CREATE INDEX run_claimable_idx ON run (admitted_at) WHERE admitted_at IS NOT NULL AND claimed_at IS NULL AND status IN ('queued', 'running');
    DROP SCHEMA IF EXISTS pgboss CASCADE;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX run_claimable_idx;
    ALTER TABLE run ADD COLUMN job_id uuid;
    ALTER TABLE run DROP COLUMN claimed_at;
    ALTER TABLE run DROP COLUMN admitted_at;
  `.execute(db)
}
