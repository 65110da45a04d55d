import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The highest change sequence of a tombstone the stream has forgotten (src/imports/import-site.ts
    -- forgetSeenTombstones). A site stage that read the stream's changes only up to an earlier one
    -- may have missed a delete (its data source was deleted meanwhile, and it was not waited for):
    -- its next build reads the stream whole (src/imports/build-stage.ts).
    ALTER TABLE stream ADD COLUMN forgotten_seq bigint NOT NULL DEFAULT 0;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE stream DROP COLUMN forgotten_seq`.execute(db)
}
