import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- An export template (docs/interface.md: channel_id + export_name): channels of an account that share an
    -- export_name share its id, so "action export, id N" runs every channel of the site using it.
    CREATE TABLE export_template (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      name text NOT NULL,
      UNIQUE (account_id, name)
    );

    CREATE TABLE channel (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      site_id bigint NOT NULL REFERENCES site (id) ON DELETE CASCADE,
      template_id bigint NOT NULL REFERENCES export_template (id),
      name text NOT NULL,
      active boolean NOT NULL DEFAULT true,
      format text NOT NULL CHECK (format IN ('csv', 'tsv', 'ndjson', 'xml')),
      -- [{"column": "<output column>", "source": "<stage column>"} | {"column": ..., "value": "<constant>"}]
      mapping jsonb NOT NULL,
      filter text NOT NULL DEFAULT '',
      -- [{"type": null | "new" | "modified" | "unchanged" | "deleted", "filename": "<template>"}]
      filenames jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX channel_site_idx ON channel (site_id, id);

    CREATE TABLE channel_destination (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      channel_id bigint NOT NULL REFERENCES channel (id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('feed', 'http')),
      name text,
      active boolean NOT NULL DEFAULT true,
      -- http: where each file is POSTed
      url text,
      -- feed: the unguessable path segment under which the files are served
      token text UNIQUE
    );
    CREATE INDEX channel_destination_channel_idx ON channel_destination (channel_id, id);

    -- The files of a channel's last successful export, served by the built-in destination.
    CREATE TABLE feed_file (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      channel_id bigint NOT NULL REFERENCES channel (id) ON DELETE CASCADE,
      position integer NOT NULL,
      filename text NOT NULL,
      -- path under DATA_DIR/feeds
      storage_key text NOT NULL,
      content_type text NOT NULL,
      bytes bigint NOT NULL,
      etag text NOT NULL,
      written_at timestamptz NOT NULL,
      UNIQUE (channel_id, filename)
    );

    CREATE TABLE channel_export (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      site_id bigint NOT NULL REFERENCES site (id) ON DELETE CASCADE,
      channel_id bigint NOT NULL REFERENCES channel (id) ON DELETE CASCADE,
      pid uuid NOT NULL,
      export_start timestamptz NOT NULL,
      export_time timestamptz NOT NULL,
      process_status text NOT NULL,
      product_count bigint NOT NULL DEFAULT 0,
      product_count_now bigint NOT NULL DEFAULT 0,
      product_count_previous bigint NOT NULL DEFAULT 0,
      product_count_new bigint NOT NULL DEFAULT 0,
      product_count_modified bigint NOT NULL DEFAULT 0,
      product_count_deleted bigint NOT NULL DEFAULT 0,
      product_count_unchanged bigint NOT NULL DEFAULT 0,
      product_count_skipped bigint NOT NULL DEFAULT 0,
      uploaded integer NOT NULL DEFAULT 0
    );
    CREATE INDEX channel_export_channel_idx ON channel_export (channel_id, id);
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE channel_export;
    DROP TABLE feed_file;
    DROP TABLE channel_destination;
    DROP TABLE channel;
    DROP TABLE export_template;
  `.execute(db)
}
