-- Intake: accounts, their keys and sender ids, the prepaid ledger, messages and bulk sends.

CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Available balance in ten-thousandths: a running total of ledger_entries, kept in the same
-- transaction as each entry so a send checks it with one row lock. A table of its own, which
-- nothing references: every send rewrites this row, and foreign-key checks against a row with
-- a long chain of dead versions (messages → accounts) would walk that chain once per message.
CREATE TABLE account_balances (
  account_id uuid PRIMARY KEY REFERENCES accounts (id),
  balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  token_hash text NOT NULL UNIQUE, -- SHA-256 of the secret, hex; the secret itself is never stored
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  deleted_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at);

CREATE TABLE sender_ids (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  address text NOT NULL CHECK (address ~ '^[A-Za-z0-9]{3,11}$'),
  verification_status text NOT NULL CHECK (verification_status IN ('verified', 'pending', 'rejected')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, address)
);

CREATE TABLE bulk_sends (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  sender_id text NOT NULL,
  total integer NOT NULL,
  charge bigint NOT NULL,
  currency text NOT NULL,
  webhook_url text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE messages (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  bulk_id uuid REFERENCES bulk_sends (id),
  "to" text NOT NULL,
  body text NOT NULL,
  sender_id text NOT NULL,
  operator text NOT NULL CHECK (operator IN ('', 'econet', 'netone', 'telecel')),
  encoding text NOT NULL CHECK (encoding IN ('gsm7', 'ucs2')),
  segments integer NOT NULL CHECK (segments > 0),
  charge bigint NOT NULL CHECK (charge >= 0),
  charge_currency text NOT NULL,
  operator_response text NOT NULL DEFAULT '',
  status text NOT NULL CHECK (status IN ('created', 'enqueued', 'processing', 'success', 'failed')),
  -- Where the held charge stands; each move happens once, guarded by its previous value.
  billing text NOT NULL CHECK (billing IN ('held', 'captured', 'released')),
  webhook_url text,
  received_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz
);
CREATE INDEX messages_account_idx ON messages (account_id, created_at);
CREATE INDEX messages_bulk_idx ON messages (bulk_id) WHERE bulk_id IS NOT NULL;

-- Every balance change is a row. available = top_up - hold + release; a capture turns a hold
-- into a charge and leaves the available balance as it is.
CREATE TABLE ledger_entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  kind text NOT NULL CHECK (kind IN ('top_up', 'hold', 'capture', 'release')),
  amount bigint NOT NULL CHECK (amount > 0),
  message_id uuid,
  bulk_id uuid,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_entries_account_idx ON ledger_entries (account_id, id);
CREATE INDEX ledger_entries_message_idx ON ledger_entries (message_id) WHERE message_id IS NOT NULL;

CREATE TABLE idempotency_keys (
  account_id uuid NOT NULL REFERENCES accounts (id),
  endpoint text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status_code integer NOT NULL,
  response jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, endpoint, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
