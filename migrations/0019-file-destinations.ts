import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Channel destinations on file servers (issue 34): SFTP and FTPS. Their settings (host, port,
    -- user, directory, host key, temporary-name upload) as JSON; their credentials (password, private
    -- key, passphrase) sealed with the operator's CREDENTIALS_KEY, never stored in the clear.
    ALTER TABLE channel_destination DROP CONSTRAINT channel_destination_kind_check;
    ALTER TABLE channel_destination ADD CONSTRAINT channel_destination_kind_check CHECK (kind IN ('feed', 'http', 'sftp', 'ftps'));
    ALTER TABLE channel_destination ADD COLUMN settings jsonb;
    ALTER TABLE channel_destination ADD COLUMN sealed_credentials text;

    -- A push to a file server names its destination (its settings are read when it is sent, so a
    -- corrected password serves the retries); an http push keeps its URL as before.
    ALTER TABLE channel_push ADD COLUMN destination_id bigint REFERENCES channel_destination (id) ON DELETE SET NULL;
    ALTER TABLE channel_push ADD COLUMN kind text NOT NULL DEFAULT 'http';

    -- Every attempt of a push, readable through the API and in the console.
    CREATE TABLE push_attempt (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      push_id bigint NOT NULL REFERENCES channel_push (id) ON DELETE CASCADE,
      channel_id bigint NOT NULL,
      attempt integer NOT NULL,
      started_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      bytes bigint,
      remote_path text,
      outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'retrying')),
      error text
    );
    CREATE INDEX push_attempt_channel ON push_attempt (account_id, channel_id, id DESC);
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE push_attempt;
    ALTER TABLE channel_push DROP COLUMN kind;
    ALTER TABLE channel_push DROP COLUMN destination_id;
    ALTER TABLE channel_destination DROP COLUMN sealed_credentials;
    ALTER TABLE channel_destination DROP COLUMN settings;
  `.execute(db)
}
