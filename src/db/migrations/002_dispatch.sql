-- Dispatch: per-segment SMSC ids for receipt matching, early receipts, dispatch leases and
-- the shared SMPP bind slots.

ALTER TABLE messages
  ADD COLUMN attempts integer NOT NULL DEFAULT 0,
  -- A worker holds a message while it submits it, so a job that runs twice (pg-boss delivers
  -- at least once) never submits the same message from two places at once.
  ADD COLUMN locked_until timestamptz,
  ADD COLUMN last_error text,
  ADD COLUMN accepted_at timestamptz;

-- One row per segment the carrier accepted, written in the transaction that records the
-- acceptance. smsc_id is canonical (the decimal value), whatever the carrier's format.
CREATE TABLE message_parts (
  message_id uuid NOT NULL REFERENCES messages (id),
  part_no smallint NOT NULL CHECK (part_no > 0),
  operator text NOT NULL,
  smsc_id text NOT NULL,
  accepted_at timestamptz NOT NULL DEFAULT now(),
  receipt_state text,
  receipt_at timestamptz,
  PRIMARY KEY (message_id, part_no)
);
CREATE INDEX message_parts_smsc_idx ON message_parts (operator, smsc_id);

-- Receipts that matched no recorded segment yet: a receipt may overtake its submit_sm_resp's
-- commit. They are applied when the segment is recorded, or by the sweep; after a grace
-- period an unmatched one is counted as unknown and dropped.
CREATE TABLE early_receipts (
  operator text NOT NULL,
  smsc_id text NOT NULL,
  state text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (operator, smsc_id, state)
);

-- A carrier allows only so many binds: each worker must hold a slot to bind, renewed while
-- it lives, so binds are shared across processes through Postgres.
CREATE TABLE smpp_bind_slots (
  operator text NOT NULL,
  slot integer NOT NULL,
  owner text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (operator, slot)
);
