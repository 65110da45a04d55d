import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A mapped channel's clean rows refer to the import stage's rows too (src/db/referred-data.ts):
    -- the mapping their data is made with, saved with the stage. Null: a channel stage that refers
    -- without a mapping, or does not refer (refers_to_import says which).
    ALTER TABLE site_stage ADD COLUMN refers_mapping jsonb;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A mapped stage's referring rows get their data back before the mapping that makes it goes.
    UPDATE stage_product c SET data = (
        SELECT coalesce(jsonb_object_agg(m ->> 'column',
          CASE WHEN m ? 'source' THEN coalesce(i.data ->> (m ->> 'source'), '') ELSE m ->> 'value' END), '{}'::jsonb)
        FROM stage_product i, jsonb_array_elements(s.refers_mapping) AS m
        WHERE i.site_id = c.site_id AND i.stage = 'import' AND i.stage_id = 0 AND i.product_id = c.product_id)
      FROM site_stage s
      WHERE s.site_id = c.site_id AND s.stage = c.stage AND s.stage_id = c.stage_id AND s.refers_mapping IS NOT NULL AND c.data IS NULL;
    ALTER TABLE site_stage DROP COLUMN refers_mapping;
  `.execute(db)
}
