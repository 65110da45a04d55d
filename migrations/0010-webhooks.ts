import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- An account's subscription to events (issue 15). The secret signs every delivery (Standard
    -- Webhooks), so it is kept as given, not hashed; after a rotation the previous one signs too
    -- until previous_secret_expires_at.
    CREATE TABLE webhook (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      url text NOT NULL,
      -- event types, or the one entry 'all' (also the types added later)
      events text[] NOT NULL,
      active boolean NOT NULL DEFAULT true,
      description text NOT NULL DEFAULT '',
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      -- failed attempts since the last delivered one, and when that streak began
      consecutive_failures integer NOT NULL DEFAULT 0,
      failing_since timestamptz,
      -- set (with active = false) when the service gave up on the endpoint; cleared when it is activated again
      disabled_reason text,
      disabled_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_account_idx ON webhook (account_id, id);

    -- The outbox: an event is written in the transaction of what it reports, with one delivery per
    -- subscription it matched, so nothing is sent for work that rolled back and nothing committed is
    -- lost. Its id is the webhook-id header: the same on every attempt, for receivers to deduplicate.
    CREATE TABLE webhook_event (
      id uuid PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      type text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_event_created_idx ON webhook_event (created_at);

    -- One event to one subscription. A claimed delivery stays 'pending' with a lease (locked_until):
    -- past it, the process that claimed it is taken for dead and another sends it again.
    CREATE TABLE webhook_delivery (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      webhook_id bigint NOT NULL REFERENCES webhook (id) ON DELETE CASCADE,
      event_id uuid NOT NULL REFERENCES webhook_event (id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz DEFAULT now(),
      -- no attempt after this: the delivery fails instead. Null: WEBHOOK_RETRY_HOURS after created_at;
      -- a manual retry opens a new window from its own time.
      retry_until timestamptz,
      locked_until timestamptz,
      last_attempt_at timestamptz,
      last_response_code integer,
      last_error text,
      -- the first KiB of the last response's body, as text
      response_body text,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      UNIQUE (webhook_id, event_id)
    );
    -- the claim: which accounts have due deliveries, then each account's oldest
    CREATE INDEX webhook_delivery_due_idx ON webhook_delivery (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_delivery_account_due_idx ON webhook_delivery (account_id, next_attempt_at, id) WHERE status = 'pending';
    CREATE INDEX webhook_delivery_list_idx ON webhook_delivery (account_id, webhook_id, id);
    CREATE INDEX webhook_delivery_event_idx ON webhook_delivery (event_id);
    CREATE INDEX webhook_delivery_finished_idx ON webhook_delivery (finished_at) WHERE status <> 'pending';
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE webhook_delivery; DROP TABLE webhook_event; DROP TABLE webhook`.execute(db)
}
