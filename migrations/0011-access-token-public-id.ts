import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The public part of a personal access token (issue 21): tokens are issued as
    -- cpat_<public_id>_<secret>, so that a failed authentication names the token being guessed and is
    -- counted for it, not only for its address. Null for tokens issued before (cpat_<secret>), which
    -- keep working; token_hash stays the hash of the whole token.
    ALTER TABLE access_token ADD COLUMN public_id text UNIQUE;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE access_token DROP COLUMN public_id`.execute(db)
}
