import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Pushes are claimed in the shape webhook deliveries are (src/db/leased-claims.ts): a claimed
    -- push stays 'pending' under its lease (locked_until), and the time its next attempt is due has
    -- the deliveries' name. A push running at the upgrade keeps its lease.
    UPDATE channel_push SET status = 'pending' WHERE status = 'running';
    ALTER TABLE channel_push RENAME COLUMN run_at TO next_attempt_at;
    ALTER TABLE channel_push DROP CONSTRAINT channel_push_status_check;
    ALTER TABLE channel_push ADD CONSTRAINT channel_push_status_check CHECK (status IN ('pending', 'done', 'failed', 'skipped'));
    DROP INDEX channel_push_due_idx;
    DROP INDEX channel_push_running_idx;
    CREATE INDEX channel_push_due_idx ON channel_push (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX channel_push_account_due_idx ON channel_push (account_id, next_attempt_at, id) WHERE status = 'pending';
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX channel_push_account_due_idx;
    DROP INDEX channel_push_due_idx;
    ALTER TABLE channel_push DROP CONSTRAINT channel_push_status_check;
    ALTER TABLE channel_push ADD CONSTRAINT channel_push_status_check CHECK (status IN ('pending', 'running', 'done', 'failed', 'skipped'));
    ALTER TABLE channel_push RENAME COLUMN next_attempt_at TO run_at;
    UPDATE channel_push SET status = 'running' WHERE status = 'pending' AND locked_until > now();
    CREATE INDEX channel_push_due_idx ON channel_push (run_at, id) WHERE status IN ('pending', 'running');
    CREATE INDEX channel_push_running_idx ON channel_push (account_id) WHERE status = 'running';
  `.execute(db)
}
