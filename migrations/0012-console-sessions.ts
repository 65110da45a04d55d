import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Sessions of the console (issue 22), kept in Postgres so that any server process serves any
    -- session. The cookie holds a random id; only its hash is stored. An operator session has no account.
    CREATE TABLE console_session (
      id_hash text PRIMARY KEY,
      account_id bigint REFERENCES account (id) ON DELETE CASCADE,
      operator boolean NOT NULL DEFAULT false,
      -- The credential that signed in (platform:<client_id>, token:<id>, or a mark of the operator
      -- token): the session lasts only while it stays valid.
      credential_id text NOT NULL,
      csrf_token text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      CHECK (operator OR account_id IS NOT NULL)
    );
    CREATE INDEX console_session_expires ON console_session (expires_at);
    -- The key that signs the console's cookies, one for every process on the database.
    CREATE TABLE console_key (
      id integer PRIMARY KEY CHECK (id = 1),
      secret text NOT NULL
    );
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE console_session; DROP TABLE console_key`.execute(db)
}
