import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- One file of one export to one http destination. Pushes are sent by a worker of their own
    -- after the export committed, so a slow destination never holds a run slot. The destination's
    -- URL is copied: a channel update replaces its destination rows while pushes may still wait.
    CREATE TABLE channel_push (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      site_id bigint NOT NULL,
      channel_id bigint NOT NULL REFERENCES channel (id) ON DELETE CASCADE,
      export_id bigint NOT NULL REFERENCES channel_export (id) ON DELETE CASCADE,
      pid uuid NOT NULL,
      url text NOT NULL,
      storage_key text NOT NULL,
      filename text NOT NULL,
      content_type text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed', 'skipped')),
      attempts integer NOT NULL DEFAULT 0,
      -- not before: the backoff of a retry
      run_at timestamptz NOT NULL DEFAULT now(),
      -- the lease of a running push: past it, the process that claimed it is taken for dead
      locked_until timestamptz,
      -- the run's push budget: set when the run's first push is claimed, shared by all of them
      budget_ends_at timestamptz,
      note text,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    );
    CREATE INDEX channel_push_due_idx ON channel_push (run_at, id) WHERE status IN ('pending', 'running');
    CREATE INDEX channel_push_running_idx ON channel_push (account_id) WHERE status = 'running';
    CREATE INDEX channel_push_export_idx ON channel_push (export_id);
    CREATE INDEX channel_push_run_idx ON channel_push (account_id, pid);
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE channel_push`.execute(db)
}
