-- Two-way messaging and opt-outs (issue 26; docs/decisions/0005-inbound-and-opt-outs.md).
-- Numbers are kept in the international form they are compared in: digits only, with the
-- country code (src/domain/numbers.ts internationalForm); short codes as their digits.

-- An inbound address (short code or long number) has one owner, the account its messages go to.
CREATE TABLE inbound_numbers (
  number text PRIMARY KEY CHECK (number ~ '^[0-9]{3,20}$'),
  account_id uuid NOT NULL REFERENCES accounts (id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX inbound_numbers_account_idx ON inbound_numbers (account_id, number);

-- What a handset sent, whole: one row per message, its parts joined (mobile_originated keeps
-- each deliver_sm). account_id is null for a message to an address nobody owns (unrouted).
-- parts: the parts joined; complete: every part the message announced was there.
CREATE TABLE inbound_messages (
  id uuid PRIMARY KEY,
  account_id uuid,
  link text NOT NULL,
  operator text NOT NULL,
  "from" text NOT NULL,
  "to" text NOT NULL,
  body text NOT NULL,
  encoding text NOT NULL CHECK (encoding IN ('gsm7', 'ascii', 'latin1', 'ucs2')),
  parts integer NOT NULL CHECK (parts > 0),
  complete boolean NOT NULL,
  -- The keyword the whole text matched, and its kind; null for any other text.
  keyword text,
  keyword_kind text CHECK (keyword_kind IN ('opt_out', 'opt_in', 'help')),
  -- The keyword reply: null when none was wanted, pending until it is sent (or could not be).
  reply text CHECK (reply IN ('pending', 'sent', 'not_sent')),
  reply_message_id uuid,
  received_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- GET /api/v1/inbound: an account's messages newest first, alone or from one number or to one.
CREATE INDEX inbound_messages_account_page_idx ON inbound_messages (account_id, received_at, id)
  WHERE account_id IS NOT NULL;
CREATE INDEX inbound_messages_account_from_idx ON inbound_messages (account_id, "from", received_at, id)
  WHERE account_id IS NOT NULL;
CREATE INDEX inbound_messages_account_to_idx ON inbound_messages (account_id, "to", received_at, id)
  WHERE account_id IS NOT NULL;
-- `shiri inbound list --unrouted`, and what retention deletes by.
CREATE INDEX inbound_messages_unrouted_idx ON inbound_messages (received_at, id) WHERE account_id IS NULL;
CREATE INDEX inbound_messages_received_idx ON inbound_messages (received_at);
-- Keyword replies not sent yet (a worker that died between the message and its reply).
CREATE INDEX inbound_messages_reply_idx ON inbound_messages (created_at) WHERE reply = 'pending';

-- Each deliver_sm as it came: its user data's octets (after the UDH), where it sits in a
-- concatenated message, a fingerprint that finds the same PDU sent again by the SMSC, and the
-- message it became part of (null while its message waits for other parts).
ALTER TABLE mobile_originated
  ADD COLUMN user_data bytea,
  ADD COLUMN concat_ref integer,
  ADD COLUMN concat_total smallint,
  ADD COLUMN concat_seq smallint,
  ADD COLUMN fingerprint bytea,
  ADD COLUMN inbound_message_id uuid;
CREATE INDEX mobile_originated_fingerprint_idx ON mobile_originated (fingerprint, received_at)
  WHERE fingerprint IS NOT NULL;
-- Parts waiting for the rest of their message, by message and by age.
CREATE INDEX mobile_originated_waiting_idx
  ON mobile_originated (link, source_addr, destination_addr, concat_ref, concat_total)
  WHERE inbound_message_id IS NULL AND concat_total IS NOT NULL;
CREATE INDEX mobile_originated_waiting_since_idx ON mobile_originated (received_at)
  WHERE inbound_message_id IS NULL AND concat_total IS NOT NULL;

-- An account's opt-out list: numbers no send of the account reaches. The send path checks it in
-- the statement that writes the messages (src/sending/record-send.ts), by this key.
CREATE TABLE opt_outs (
  account_id uuid NOT NULL REFERENCES accounts (id),
  number text NOT NULL,
  -- Why: a keyword the number sent (which, and in what message), or the API.
  source text NOT NULL CHECK (source IN ('keyword', 'api')),
  keyword text,
  inbound_message_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, number)
);
CREATE INDEX opt_outs_account_page_idx ON opt_outs (account_id, created_at, number);

-- An account's own keyword lists and replies; an account without a row has the defaults
-- (src/inbound/keywords.ts). A null reply sends none.
CREATE TABLE inbound_keywords (
  account_id uuid PRIMARY KEY REFERENCES accounts (id),
  opt_out text[] NOT NULL,
  opt_in text[] NOT NULL,
  help text[] NOT NULL,
  opt_out_reply text,
  opt_in_reply text,
  help_reply text,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Callback events about inbound messages and the opt-out list go to the account webhook. An
-- event about no message (a number opted out through the API) has no message_id. NOT VALID: every
-- existing row already holds, and the tables may be large.
ALTER TABLE webhook_events ALTER COLUMN message_id DROP NOT NULL;
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_type_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_type_check CHECK (
  type IN ('message.enqueued', 'message.success', 'message.failed', 'message.delivered', 'message.undelivered',
           'message.received', 'contact.opted_out', 'contact.opted_in')
) NOT VALID;
ALTER TABLE account_webhooks DROP CONSTRAINT account_webhooks_events_check;
ALTER TABLE account_webhooks ADD CONSTRAINT account_webhooks_events_check CHECK (
  events IS NULL OR (cardinality(events) > 0 AND events <@ ARRAY['message.enqueued', 'message.success',
    'message.failed', 'message.delivered', 'message.undelivered', 'message.received', 'contact.opted_out',
    'contact.opted_in']::text[])
) NOT VALID;
