-- Callbacks that cannot be turned on a stranger (issue 28; docs/decisions/0004-migrations-and-refused-callbacks.md).

-- URLs whose receiver answered 410 Gone to an account's callbacks: the account's events bound for
-- one of them fail without a request until the account sets the URL again (PUT /api/v1/webhook).
-- url is as WHATWG URL parsing writes it, without its fragment (src/webhooks/refusals.ts).
CREATE TABLE webhook_stopped_urls (
  account_id uuid NOT NULL REFERENCES accounts (id),
  url text NOT NULL,
  stopped_at timestamptz NOT NULL DEFAULT now(),
  -- The event that was answered 410.
  event_id uuid NOT NULL,
  PRIMARY KEY (account_id, url)
);

-- An event a 410 ended, answered 410 itself or failed because its URL was stopped: redelivery never
-- revives it. A constant default: Postgres records it in the catalogue and rewrites no row.
ALTER TABLE webhook_events ADD COLUMN ended_by_gone boolean NOT NULL DEFAULT false;

-- Redelivery is bounded per account (WEBHOOK_REDELIVERIES_PER_HOUR events): a bucket that holds an
-- hour's worth and drains at that pace, `level` events taken as of `at`, shared by every API process.
CREATE TABLE webhook_redelivery_budget (
  account_id uuid PRIMARY KEY REFERENCES accounts (id),
  level double precision NOT NULL DEFAULT 0 CHECK (level >= 0),
  at timestamptz NOT NULL DEFAULT now()
);
