-- Webhooks: the account webhook with its signing secret, and the outbox of message events.

-- One row per account that has a signing secret; url is null when no account webhook is
-- registered (the secret still signs callbacks to a send's own webhook_url). The secret is
-- stored as is: HMAC needs it in clear, and whoever reads this table can read every message
-- body anyway. It is returned to the client once (secret_shown_at records when).
CREATE TABLE account_webhooks (
  account_id uuid PRIMARY KEY REFERENCES accounts (id),
  url text CHECK (url IS NULL OR url ~ '^https?://'),
  signing_secret text NOT NULL,
  secret_created_at timestamptz NOT NULL DEFAULT now(),
  secret_shown_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The outbox: one row per event, written in the transaction of the status change it announces.
-- payload is the exact JSON sent (json, not jsonb, so its bytes and key order are kept); the
-- delivery worker never re-reads the message. No foreign key to messages: inserts stay cheap
-- and events outlive any later partitioning of messages.
CREATE TABLE webhook_events (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL,
  message_id uuid NOT NULL,
  type text NOT NULL CHECK (type IN ('message.enqueued', 'message.success', 'message.failed',
                                     'message.delivered', 'message.undelivered')),
  url text NOT NULL,
  payload json NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  -- When the next attempt may start; enqueued_at is null while no delivery job exists for it.
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  enqueued_at timestamptz,
  last_attempt_at timestamptz,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
-- What the relay scans: events due for an attempt that no job carries yet (small by design).
CREATE INDEX webhook_events_due_idx ON webhook_events (next_attempt_at) WHERE enqueued_at IS NULL;
CREATE INDEX webhook_events_message_idx ON webhook_events (message_id);
CREATE INDEX webhook_events_failed_idx ON webhook_events (account_id, created_at) WHERE state = 'failed';
-- The backlog (counted by the metrics sampler) without reading settled events.
CREATE INDEX webhook_events_pending_idx ON webhook_events (created_at) WHERE state = 'pending';
-- What the retention sweep deletes by: settled events, oldest first.
CREATE INDEX webhook_events_completed_idx ON webhook_events (completed_at) WHERE completed_at IS NOT NULL;
