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
    -- of the feed keeps its data and has no line; the skipped file lists those rows.
    ALTER TABLE stage_product ADD COLUMN issues bigint;
    CREATE INDEX stage_product_issues_idx ON stage_product (site_id, stage_id, product_id) WHERE stage = 'channel' AND issues IS NOT NULL;
    -- Lines from before 0007 were never written: such a row was in its feed, which a null line would now deny.
    UPDATE stage_product SET line = '' WHERE stage = 'channel' AND line IS NULL;

    -- The counts of the last export's checks (per code, products with errors, warnings, left out),
    -- kept up to date from the changed rows alone, and the readiness score it announced.
    ALTER TABLE site_stage ADD COLUMN checks jsonb;

    -- GS1 check digit: the digits padded to 14, weighted 3 and 1 from the left, sum to a multiple of 10.
    CREATE FUNCTION catalog_gtin_sum(p text) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT 3 * (substr(p, 1, 1)::int + substr(p, 3, 1)::int + substr(p, 5, 1)::int + substr(p, 7, 1)::int
                + substr(p, 9, 1)::int + substr(p, 11, 1)::int + substr(p, 13, 1)::int)
             + substr(p, 2, 1)::int + substr(p, 4, 1)::int + substr(p, 6, 1)::int + substr(p, 8, 1)::int
             + substr(p, 10, 1)::int + substr(p, 12, 1)::int + substr(p, 14, 1)::int
    $$;
    CREATE FUNCTION catalog_gtin_valid(value text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE WHEN value ~ '^([0-9]{8}|[0-9]{12,14})$' THEN catalog_gtin_sum(lpad(value, 14, '0')) % 10 = 0 ELSE false END
    $$;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION catalog_gtin_valid(text);
    DROP FUNCTION catalog_gtin_sum(text);
    ALTER TABLE site_stage DROP COLUMN checks;
    DROP INDEX stage_product_issues_idx;
    ALTER TABLE stage_product DROP COLUMN issues;
    ALTER TABLE channel DROP COLUMN template, DROP COLUMN validation_mode, DROP COLUMN currency, DROP COLUMN readiness_threshold;
  `.execute(db)
}
