import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Attribute names of the stream's catalog in first-seen order (jsonb keeps no key order), and
    -- the change sequence of the last applied batch group: a site's stage records up to which change
    -- it has read each stream, so the next import reads only what changed since.
    ALTER TABLE stream
      ADD COLUMN columns text[] NOT NULL DEFAULT '{}',
      ADD COLUMN applied_seq bigint NOT NULL DEFAULT 0;

    -- An applied batch keeps its rows in batch_row until the hourly cleanup releases them (deleting
    -- a million rows is not something an import should wait for).
    ALTER TABLE batch ADD COLUMN applied_at timestamptz, ADD COLUMN rows_released boolean NOT NULL DEFAULT false;
    CREATE INDEX batch_pending_idx ON batch (stream_id, seq) WHERE applied_at IS NULL;
    CREATE INDEX batch_unreleased_idx ON batch (applied_at) WHERE applied_at IS NOT NULL AND NOT rows_released;

    -- Sites deleted since the last cleanup: their stage rows (no foreign key) are removed by it.
    CREATE TABLE site_purge (site_id bigint PRIMARY KEY, deleted_at timestamptz NOT NULL DEFAULT now());

    -- Taken once per applied batch group, under the stream's row lock, so that per stream it grows
    -- in commit order (batch seq does not: an upload that started first may commit last).
    CREATE SEQUENCE stream_change_seq;

    -- The stream's catalog: every batch applied once, whichever site imported it. A deleted product
    -- stays as a tombstone (data NULL) until every site reading the stream has seen the delete.
    -- No foreign key: its check costs a third of a large import (bench/results/import.md); the purge
    -- of a deleted stream removes its rows. Changes are appended at the end of the heap, so a BRIN
    -- index finds the rows changed since a sequence number for next to nothing on insert.
    CREATE TABLE stream_product (
      stream_id bigint NOT NULL,
      product_id text COLLATE "C" NOT NULL,
      account_id bigint NOT NULL,
      data jsonb,
      changed_seq bigint NOT NULL,
      PRIMARY KEY (stream_id, product_id)
    );
    CREATE INDEX stream_product_changed_idx ON stream_product USING brin (stream_id, changed_seq);
    -- Tombstones are few: a small index finds them for the stage's deletes and for their cleanup,
    -- which would otherwise read every row of the stream to find none.
    CREATE INDEX stream_product_tombstone_idx ON stream_product (stream_id, changed_seq) WHERE data IS NULL;

    -- A stage of a site: the import stage (stage 'import', stage_id 0) or a channel's export stage.
    -- The primary key's order is the read order, so paging is stable. No foreign key, for the same
    -- reason as stream_product: the hourly purge removes the rows of deleted sites.
    CREATE TABLE stage_product (
      site_id bigint NOT NULL,
      stage text NOT NULL,
      stage_id bigint NOT NULL,
      product_id text COLLATE "C" NOT NULL,
      account_id bigint NOT NULL,
      data jsonb NOT NULL,
      PRIMARY KEY (site_id, stage, stage_id, product_id)
    );

    CREATE TABLE site_stage (
      site_id bigint NOT NULL REFERENCES site (id) ON DELETE CASCADE,
      stage text NOT NULL,
      stage_id bigint NOT NULL,
      account_id bigint NOT NULL,
      columns text[] NOT NULL DEFAULT '{}',
      row_count bigint NOT NULL DEFAULT 0,
      -- What the stage was built from (sources, id column): a different recipe means a full rebuild.
      recipe text NOT NULL DEFAULT '',
      -- stream id -> stream.applied_seq read by the last build
      stream_seqs jsonb NOT NULL DEFAULT '{}',
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (site_id, stage, stage_id)
    );

    CREATE TABLE process (
      pid uuid PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      site_id bigint NOT NULL REFERENCES site (id) ON DELETE CASCADE,
      action text NOT NULL CHECK (action IN ('import', 'export', 'channel', 'export-all', 'all')),
      target_id bigint,
      trigger text NOT NULL CHECK (trigger IN ('api', 'schedule')),
      status text NOT NULL CHECK (status IN ('queued', 'running', 'success', 'failed')),
      message text NOT NULL DEFAULT '',
      -- Runs of this site waiting for their turn have no job yet: a job is sent only when the run
      -- may start, so that the queue never holds a job that some worker would have to skip.
      job_id uuid,
      attempt integer NOT NULL DEFAULT 0,
      heartbeat_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz
    );
    -- One queued and one running run per site, whatever a racing request does.
    CREATE UNIQUE INDEX process_one_queued_idx ON process (site_id) WHERE status = 'queued';
    CREATE UNIQUE INDEX process_one_running_idx ON process (site_id) WHERE status = 'running';
    CREATE INDEX process_site_idx ON process (site_id, created_at);
    CREATE INDEX process_running_idx ON process (heartbeat_at) WHERE status = 'running';

    CREATE TABLE import_history (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      site_id bigint NOT NULL REFERENCES site (id) ON DELETE CASCADE,
      pid uuid NOT NULL,
      product_count bigint NOT NULL,
      import_time timestamptz NOT NULL
    );
    CREATE INDEX import_history_site_idx ON import_history (site_id, id);

    CREATE TABLE site_error (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      site_id bigint NOT NULL REFERENCES site (id) ON DELETE CASCADE,
      pid uuid NOT NULL,
      error integer NOT NULL,
      type text NOT NULL CHECK (type IN ('Error', 'Warning', 'Info')),
      classification text NOT NULL CHECK (classification IN ('low', 'medium', 'high')),
      message text NOT NULL,
      data jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX site_error_pid_idx ON site_error (site_id, pid, id);

    -- Next firing of each site's import_schedule. Claimed FOR UPDATE SKIP LOCKED by whichever server
    -- process looks first; schedule holds the text it was computed from, so an edited schedule is
    -- noticed before the old one can fire.
    CREATE TABLE site_schedule (
      site_id bigint PRIMARY KEY REFERENCES site (id) ON DELETE CASCADE,
      account_id bigint NOT NULL,
      schedule text NOT NULL,
      next_run_at timestamptz
    );
    CREATE INDEX site_schedule_due_idx ON site_schedule (next_run_at);
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE site_schedule;
    DROP TABLE site_error;
    DROP TABLE import_history;
    DROP TABLE process;
    DROP TABLE site_stage;
    DROP TABLE stage_product;
    DROP TABLE stream_product;
    DROP SEQUENCE stream_change_seq;
    DROP TABLE site_purge;
    DROP INDEX batch_unreleased_idx;
    DROP INDEX batch_pending_idx;
    ALTER TABLE batch DROP COLUMN rows_released, DROP COLUMN applied_at;
    ALTER TABLE stream DROP COLUMN applied_seq, DROP COLUMN columns;
  `.execute(db)
}
