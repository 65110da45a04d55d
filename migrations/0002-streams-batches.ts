import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A deleted stream keeps its row (and so its name, through the unique index) until the purge
    -- removes it 7 days later; every read filters deleted_at IS NULL.
    CREATE TABLE stream (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      name text NOT NULL,
      type text NOT NULL CHECK (type IN ('chunked', 'referenced')),
      status text NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'disabled', 'locked', 'locked_upload', 'locked_processing')),
      content_type text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz,
      UNIQUE (account_id, name)
    );
    CREATE INDEX stream_account_live_idx ON stream (account_id, id) WHERE deleted_at IS NULL;
    CREATE INDEX stream_deleted_idx ON stream (deleted_at) WHERE deleted_at IS NOT NULL;

    -- seq orders batches by upload; ids are UUIDs because clients see them.
    CREATE TABLE batch (
      id uuid PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      stream_id bigint NOT NULL REFERENCES stream (id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('upsert', 'delete', 'delete_all')),
      status text NOT NULL CHECK (status IN ('uploaded', 'processed', 'failed')),
      content_type text,
      upload_stage jsonb NOT NULL,
      processing_stage jsonb,
      error_count integer NOT NULL DEFAULT 0,
      row_count integer NOT NULL DEFAULT 0,
      -- Attribute names of the accepted rows in first-seen order: the stage's column order comes from
      -- here, since jsonb does not keep the order of keys.
      columns text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL
    );
    CREATE INDEX batch_stream_idx ON batch (stream_id, seq);

    -- Validated rows of a chunked upload (data: a flat JSON object, every value a string), or the
    -- ids of a delete batch (data NULL). Written with COPY in the transaction that creates the batch,
    -- and only ever read a whole batch at a time. No primary key and no foreign key: together they
    -- cost more than the rest of the COPY (bench/results/upload.md); rows arrive clustered by batch,
    -- so a BRIN index finds a batch's rows, and whoever deletes batches deletes their rows.
    CREATE TABLE batch_row (
      batch_id uuid NOT NULL,
      line_no integer NOT NULL,
      account_id bigint NOT NULL,
      product_id text NOT NULL,
      data text
    );
    CREATE INDEX batch_row_batch_idx ON batch_row USING brin (batch_id);

    -- A referenced upload is kept as received (decompressed) and parsed when an import reads it.
    -- Kept in Postgres so that it commits with its batch and every server process can read it.
    CREATE TABLE batch_payload (
      batch_id uuid NOT NULL REFERENCES batch (id) ON DELETE CASCADE,
      chunk_no integer NOT NULL,
      account_id bigint NOT NULL,
      chunk bytea NOT NULL,
      PRIMARY KEY (batch_id, chunk_no)
    );

    CREATE TABLE data_source (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      site_id bigint NOT NULL REFERENCES site (id) ON DELETE CASCADE,
      stream_id bigint NOT NULL REFERENCES stream (id) ON DELETE CASCADE,
      import_type smallint NOT NULL CHECK (import_type IN (1, 2)),
      description text NOT NULL DEFAULT '',
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
      import_empty boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX data_source_site_idx ON data_source (site_id, id);
    CREATE INDEX data_source_stream_idx ON data_source (stream_id);
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE data_source;
    DROP TABLE batch_payload;
    DROP TABLE batch_row;
    DROP TABLE batch;
    DROP TABLE stream;
  `.execute(db)
}
