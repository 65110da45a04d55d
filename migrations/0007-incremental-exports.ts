import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Each build of a site's import stage has a number; an incremental build records the ids it
    -- touched under it, so that an export finds the rows changed since the build it last exported
    -- from without reading the stage (issue 13). A full rebuild records nothing: it sets
    -- changes_from, and a channel exported from an older build compares everything once.
    ALTER TABLE site_stage
      ADD COLUMN build bigint NOT NULL DEFAULT 0,
      ADD COLUMN changes_from bigint NOT NULL DEFAULT 0,
      ADD COLUMN signature text,
      ADD COLUMN line_bytes bigint NOT NULL DEFAULT 0;
    CREATE TABLE stage_change (
      site_id bigint NOT NULL,
      build bigint NOT NULL,
      product_id text COLLATE "C" NOT NULL
    );
    CREATE INDEX stage_change_build_idx ON stage_change (site_id, build);

    -- A channel stage row keeps its feed line as rendered (CSV/TSV record, NDJSON object, XML item):
    -- an unchanged row is never rendered again, and a full file is a read of lines in key order.
    ALTER TABLE stage_product ADD COLUMN line text;

    -- A full feed file is written on its first download after the export that made it (or by its
    -- first push): the export records its size, ETag, and the text around the lines.
    ALTER TABLE feed_file
      ADD COLUMN pending boolean NOT NULL DEFAULT false,
      ADD COLUMN site_id bigint,
      ADD COLUMN header text NOT NULL DEFAULT '',
      ADD COLUMN footer text NOT NULL DEFAULT '';

    -- An import reads the rows of its pending uploads by batch id. The BRIN index could not find
    -- them: ids are random, so the planner never trusted it and read every kept upload of every
    -- account instead (the whole table for an hour after a large load: 1M rows to apply 10,000,
    -- measured). All rows of a batch share one key, which a btree stores deduplicated.
    DROP INDEX batch_row_batch_idx;
    CREATE INDEX batch_row_batch_idx ON batch_row (batch_id);
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX batch_row_batch_idx;
    CREATE INDEX batch_row_batch_idx ON batch_row USING brin (batch_id) WITH (autosummarize = on);
    ALTER TABLE feed_file DROP COLUMN pending, DROP COLUMN site_id, DROP COLUMN header, DROP COLUMN footer;
    ALTER TABLE stage_product DROP COLUMN line;
    DROP TABLE stage_change;
    ALTER TABLE site_stage DROP COLUMN build, DROP COLUMN changes_from, DROP COLUMN signature, DROP COLUMN line_bytes;
  `.execute(db)
}
