import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Feed files kept in Postgres (PostgresFeedStorage, issue 14): any server process serves any feed,
    -- and a process that dies loses nothing. One object per written file; several objects may carry
    -- the same key for a moment (two processes writing the same full file on its first download):
    -- readers take the newest stored one.
    CREATE TABLE feed_object (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      -- Byte order: removePrefix finds an export's keys by a LIKE prefix, which the btree then serves.
      key text COLLATE "C" NOT NULL,
      account_id bigint,
      -- 'writing' until its writer publishes it (then it is visible at its key).
      state text NOT NULL DEFAULT 'writing' CHECK (state IN ('writing', 'stored')),
      identity_bytes bigint,
      gzip_bytes bigint,
      created_at timestamptz NOT NULL DEFAULT now(),
      -- Removed objects stay readable by downloads that opened them until the cleanup deletes them.
      removed_at timestamptz
    );
    CREATE INDEX feed_object_key_idx ON feed_object (key, id);
    CREATE INDEX feed_object_sweep_idx ON feed_object (coalesce(removed_at, created_at)) WHERE removed_at IS NOT NULL OR state = 'writing';

    -- The gzip representation of a file in chunks of a fixed size (the last one shorter), so that a
    -- byte range is read from the chunks that hold it.
    CREATE TABLE feed_chunk (
      object_id bigint NOT NULL REFERENCES feed_object (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      data bytea NOT NULL,
      PRIMARY KEY (object_id, seq)
    );
    -- Compressed already: Postgres would try to compress each chunk again and keep it as it was.
    ALTER TABLE feed_chunk ALTER COLUMN data SET STORAGE EXTERNAL;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE feed_chunk; DROP TABLE feed_object`.execute(db)
}
