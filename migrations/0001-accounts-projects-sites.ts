import { sql, type Kysely } from 'kysely'

// Every table carries account_id so that each query can be scoped by it (and a distributed
// Postgres could later shard by it).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE account (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE platform_credential (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL UNIQUE REFERENCES account (id) ON DELETE CASCADE,
      client_id text NOT NULL UNIQUE,
      secret_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      rotated_at timestamptz
    );

    CREATE TABLE access_token (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      name text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    );
    CREATE INDEX access_token_account_idx ON access_token (account_id);

    CREATE TABLE project (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX project_account_idx ON project (account_id, id);

    CREATE TABLE site (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      project_id bigint NOT NULL REFERENCES project (id),
      title text NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused_upload', 'disabled')),
      import_schedule text NOT NULL DEFAULT '',
      id_column text NOT NULL DEFAULT 'id',
      processing_status text NOT NULL DEFAULT 'Done' CHECK (processing_status IN ('Running', 'Done')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX site_account_idx ON site (account_id, id);
    CREATE INDEX site_project_idx ON site (project_id);

    -- A site's reference is stored as a readonly tag flagged is_reference. Ordinary tags may repeat
    -- across sites (a copied site keeps its tags); a reference is unique in the account.
    CREATE TABLE site_tag (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      site_id bigint NOT NULL REFERENCES site (id) ON DELETE CASCADE,
      key text NOT NULL,
      value text NOT NULL,
      readonly boolean NOT NULL DEFAULT false,
      is_reference boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (site_id, key, value)
    );
    CREATE INDEX site_tag_lookup_idx ON site_tag (account_id, key, value);
    CREATE UNIQUE INDEX site_tag_reference_idx ON site_tag (account_id, key, value) WHERE is_reference;
    CREATE UNIQUE INDEX site_tag_one_reference_idx ON site_tag (site_id) WHERE is_reference;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE site_tag;
    DROP TABLE site;
    DROP TABLE project;
    DROP TABLE access_token;
    DROP TABLE platform_credential;
    DROP TABLE account;
  `.execute(db)
}
