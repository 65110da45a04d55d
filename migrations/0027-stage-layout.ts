import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The format a channel stage's lines were made in (csv, tsv, ndjson, xml): an export after a
    -- change of the channel's settings compares each row's line with its previous one where the
    -- lines are laid out as before (the same format and columns), not only its data
    -- (src/exports/export-delta.ts). Null: a stage saved before, compared by its data.
    ALTER TABLE site_stage ADD COLUMN format text;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE site_stage DROP COLUMN format`.execute(db)
}
