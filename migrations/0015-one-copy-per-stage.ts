import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A channel without a mapping exports the import stage's rows as they are: a clean row of its
    -- stage keeps no copy of the data (NULL) and refers to the import stage's row of the same id
    -- (issue 25, src/imports/exported-data.ts). refers_to_import says which channel stages do so,
    -- so that an import copies the data of the rows it is about to change into those stages only.
    ALTER TABLE stage_product ALTER COLUMN data DROP NOT NULL;
    ALTER TABLE site_stage ADD COLUMN refers_to_import boolean NOT NULL DEFAULT false;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE stage_product c SET data = i.data FROM stage_product i
      WHERE c.stage = 'channel' AND c.data IS NULL AND i.site_id = c.site_id AND i.stage = 'import' AND i.stage_id = 0 AND i.product_id = c.product_id;
    ALTER TABLE site_stage DROP COLUMN refers_to_import;
    ALTER TABLE stage_product ALTER COLUMN data SET NOT NULL;
  `.execute(db)
}
