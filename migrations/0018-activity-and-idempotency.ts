import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The activity log (issue 33): one row per change to an account, written in the transaction of
    -- the change. The ids only grow, so a page that ends at id n goes on below n whatever arrives since.
    -- No foreign keys: an entry outlives what it names (a deleted site, a revoked token).
    CREATE TABLE activity (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      occurred_at timestamptz NOT NULL,
      actor_type text NOT NULL,
      actor_id text NOT NULL,
      actor_label text NOT NULL,
      action text NOT NULL,
      target_type text NOT NULL,
      target_id text NOT NULL,
      site_id bigint,
      changes jsonb NOT NULL DEFAULT '{}',
      request_id text,
      request_address text,
      request_user_agent text,
      idempotency_key text
    );
    CREATE INDEX activity_account ON activity (account_id, id DESC);
    CREATE INDEX activity_site ON activity (account_id, site_id, id DESC) WHERE site_id IS NOT NULL;
    -- For the retention's delete only: rows arrive in time order, so a block range index finds them
    -- at a fraction of a b-tree's cost on every insert.
    CREATE INDEX activity_occurred ON activity USING brin (occurred_at);

    -- Idempotency keys: a request's claim while it runs, its stored answer once its change committed
    -- (written in that transaction). Shared by every process on the database.
    CREATE TABLE idempotency_key (
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      key text NOT NULL,
      fingerprint text NOT NULL,
      -- A random mark of the request that holds the claim: only it settles or releases it.
      claim text NOT NULL,
      state text NOT NULL CHECK (state IN ('running', 'done')),
      created_at timestamptz NOT NULL,
      -- A running claim whose process died is taken over after this.
      lease_until timestamptz NOT NULL,
      status integer,
      headers jsonb,
      body text,
      PRIMARY KEY (account_id, key)
    );
    CREATE INDEX idempotency_key_created ON idempotency_key (created_at);
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE idempotency_key; DROP TABLE activity`.execute(db)
}
