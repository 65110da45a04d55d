import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A channel's template (issue 24), picked by its export_name when it is saved; channels saved
    -- before templates existed keep generic, which checks nothing. How it applies the template:
    -- exclude (a product failing a required rule is left out) or warn_only; the currency a bare
    -- price gets; the readiness score below or above which channel.readiness_changed fires.
    ALTER TABLE channel
      ADD COLUMN template text NOT NULL DEFAULT 'generic',
      ADD COLUMN validation_mode text NOT NULL DEFAULT 'exclude' CHECK (validation_mode IN ('exclude', 'warn_only')),
      ADD COLUMN currency text CHECK (currency ~ '^[A-Z]{3}$'),
      ADD COLUMN readiness_threshold numeric CHECK (readiness_threshold >= 0 AND readiness_threshold <= 1);

    -- A channel stage row's failed checks, one bit per code of its template (8 bytes, null when
    -- none): the diagnostics of the channel's last export, checked when the row was. A row left out
    -- of the feed keeps its data and has no line; the skipped file lists those rows, found through
    -- an index of them alone. (Rows with issues are not indexed: a normalised price is an issue
    -- of every row of many catalogs, and the index would cost every row a second write.)
    ALTER TABLE stage_product ADD COLUMN issues bigint;
    -- Lines from before 0007 were never written: such a row was in its feed, which a null line would
    -- now deny. Its next export renders it again (its stage has no signature).
    UPDATE stage_product SET line = '' WHERE stage = 'channel' AND line IS NULL;
    CREATE INDEX stage_product_left_out_idx ON stage_product (site_id, stage_id, product_id) WHERE stage = 'channel' AND line IS NULL;

    -- The counts of the last export's checks (per code, products with errors, warnings, left out),
    -- kept up to date from the changed rows alone.
    ALTER TABLE site_stage ADD COLUMN checks jsonb;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE site_stage DROP COLUMN checks;
    DROP INDEX stage_product_left_out_idx;
    ALTER TABLE stage_product DROP COLUMN issues;
    ALTER TABLE channel DROP COLUMN template, DROP COLUMN validation_mode, DROP COLUMN currency, DROP COLUMN readiness_threshold;
  `.execute(db)
}
