-- shiri:no-transaction: its index builds are concurrent, so it runs a statement at a time and
-- every statement is harmless to repeat (src/db/migration-file.ts). It was a single transaction that
-- built the indexes with writes held off; the schema it leaves is the same (docs/decisions/0004).

-- Carrier dialects: receipts that carry an error code, stand for a whole message or may match
-- only recent submits, and mobile-originated messages kept rather than dropped.

-- The err: code of a non-delivered receipt, as the carrier wrote it (shown in operator_response).
ALTER TABLE message_parts ADD COLUMN IF NOT EXISTS receipt_err text;

-- A carrier may reuse an id: a receipt matches the most recent segment with it.
CREATE INDEX CONCURRENTLY IF NOT EXISTS message_parts_smsc_recent_idx ON message_parts (operator, smsc_id, accepted_at DESC);
DROP INDEX CONCURRENTLY IF EXISTS message_parts_smsc_idx;

-- Early receipts keep what the receipt said besides its id and state.
ALTER TABLE early_receipts
  ADD COLUMN IF NOT EXISTS err text,
  ADD COLUMN IF NOT EXISTS whole_message boolean NOT NULL DEFAULT false,
  -- The earliest acceptance a matching segment may have (the receipt's arrival less the validity).
  ADD COLUMN IF NOT EXISTS submitted_after timestamptz;

-- deliver_sm that are not receipts: acknowledged to the SMSC only once stored here.
CREATE TABLE IF NOT EXISTS mobile_originated (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  operator text NOT NULL,
  source_addr text NOT NULL,
  source_addr_ton smallint NOT NULL,
  source_addr_npi smallint NOT NULL,
  destination_addr text NOT NULL,
  esm_class smallint NOT NULL,
  data_coding smallint NOT NULL,
  -- Decoded by data_coding (message_payload's text when short_message was empty).
  body text NOT NULL,
  -- The user data header's information elements, when there was one.
  udh bytea,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS mobile_originated_received_idx ON mobile_originated (received_at);
