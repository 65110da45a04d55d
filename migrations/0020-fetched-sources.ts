import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Sources a site fetches itself (issue 34): a feed URL or a file on an SFTP server. Each keeps its
    -- rows in a stream of its own that no interface shows (source_owned), so that an import stacks
    -- and applies it like any stream; each fetch that changed the file is one 'replace' batch of it.
    ALTER TABLE stream ADD COLUMN source_owned boolean NOT NULL DEFAULT false;
    ALTER TABLE batch DROP CONSTRAINT batch_kind_check;
    ALTER TABLE batch ADD CONSTRAINT batch_kind_check CHECK (kind IN ('upsert', 'delete', 'delete_all', 'replace'));

    ALTER TABLE data_source ADD COLUMN kind text NOT NULL DEFAULT 'stream' CHECK (kind IN ('stream', 'feed_url', 'sftp'));
    -- Where and how to fetch (URL or server, path, format, id column), as JSON; the password, header
    -- value or private key sealed with the operator's CREDENTIALS_KEY.
    ALTER TABLE data_source ADD COLUMN settings jsonb;
    ALTER TABLE data_source ADD COLUMN sealed_credentials text;
    -- What the last fetch found (shown), and what tells an unchanged file (validators, size and time, digest).
    ALTER TABLE data_source ADD COLUMN last_fetch jsonb;
    ALTER TABLE data_source ADD COLUMN fetch_state jsonb;

    -- A fetched source's stream goes with it, however the source goes (deleted, or with its site).
    CREATE FUNCTION drop_source_stream() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE stream SET deleted_at = now(), updated_at = now() WHERE id = OLD.stream_id AND source_owned AND deleted_at IS NULL;
      RETURN OLD;
    END $$;
    CREATE TRIGGER data_source_drops_its_stream AFTER DELETE ON data_source
      FOR EACH ROW WHEN (OLD.kind <> 'stream') EXECUTE FUNCTION drop_source_stream();
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER data_source_drops_its_stream ON data_source;
    DROP FUNCTION drop_source_stream();
    ALTER TABLE data_source DROP COLUMN fetch_state;
    ALTER TABLE data_source DROP COLUMN last_fetch;
    ALTER TABLE data_source DROP COLUMN sealed_credentials;
    ALTER TABLE data_source DROP COLUMN settings;
    ALTER TABLE data_source DROP COLUMN kind;
    ALTER TABLE batch DROP CONSTRAINT batch_kind_check;
    ALTER TABLE batch ADD CONSTRAINT batch_kind_check CHECK (kind IN ('upsert', 'delete', 'delete_all'));
    ALTER TABLE stream DROP COLUMN source_owned;
  `.execute(db)
}
