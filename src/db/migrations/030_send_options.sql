-- Issue 30: a validity per message, delivery windows and smart encoding, the last two also as
-- account defaults (docs/decisions/0006-send-options-and-batches.md).

-- What a message was sent with; all null for a message sent without them, so rows written before
-- this migration read as they did. No CHECK here: a CHECK added with a column makes Postgres read
-- the whole table, and the API validates these at its boundary (src/intake/send-options.ts).
--   validity_period: the seconds the send asked for (60 to 259,200); null: MESSAGE_VALIDITY_HOURS.
--   expires_at: when the message fails (EXPIRED, or VALIDITY_EXPIRED without a validity_period) if
--     no carrier has accepted it; set when the send gave a validity_period or a delivery window
--     delayed it, counted from when it was due before any window; null: due + MESSAGE_VALIDITY_HOURS.
--   deliver_between: the window that applied ({start, end, time_zone}); send_at is its opening
--     when the message was accepted outside it.
--   smart_encoded: true when look-alike characters were replaced (body is the text as sent).
ALTER TABLE messages
  ADD COLUMN validity_period integer,
  ADD COLUMN expires_at timestamptz,
  ADD COLUMN deliver_between jsonb,
  ADD COLUMN smart_encoded boolean;

-- An account's defaults for its sends: a send that says nothing about smart encoding or a delivery
-- window takes these. No row: no smart encoding, no window. The key lookup every request makes
-- reads them with the key (src/accounts/api-keys.ts), so a send costs no statement more.
CREATE TABLE account_send_defaults (
  account_id uuid PRIMARY KEY REFERENCES accounts (id),
  smart_encoding boolean NOT NULL DEFAULT false,
  deliver_start text CHECK (deliver_start ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  deliver_end text CHECK (deliver_end ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  deliver_time_zone text CHECK (length(deliver_time_zone) BETWEEN 1 AND 64),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- A window is whole (start, end and zone) or absent, and never empty.
  CHECK ((deliver_start IS NULL) = (deliver_end IS NULL) AND (deliver_start IS NULL) = (deliver_time_zone IS NULL)),
  CHECK (deliver_start <> deliver_end)
);
