import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A channel stage whose lines are the rows' data as COPY's own CSV writer renders them (a CSV
    -- or TSV channel that rewrites no value and leaves no row out) stores no line per row: its
    -- format is written here, and its rows' line is NULL. NULL here: each row keeps its line.
    ALTER TABLE site_stage ADD COLUMN line_format text;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE site_stage DROP COLUMN line_format`.execute(db)
}
