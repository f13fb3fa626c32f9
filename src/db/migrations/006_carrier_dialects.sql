-- Carrier dialects: receipts that carry an error code, stand for a whole message or may match
-- only recent submits, and mobile-originated messages kept rather than dropped.

-- The err: code of a non-delivered receipt, as the carrier wrote it (shown in operator_response).
ALTER TABLE message_parts ADD COLUMN receipt_err text;

-- A carrier may reuse an id: a receipt matches the most recent segment with it.
CREATE INDEX message_parts_smsc_recent_idx ON message_parts (operator, smsc_id, accepted_at DESC);
DROP INDEX message_parts_smsc_idx;

-- Early receipts keep what the receipt said besides its id and state.
ALTER TABLE early_receipts
  ADD COLUMN err text,
  ADD COLUMN whole_message boolean NOT NULL DEFAULT false,
  -- The earliest acceptance a matching segment may have (the receipt's arrival less the validity).
  ADD COLUMN submitted_after timestamptz;

-- deliver_sm that are not receipts: acknowledged to the SMSC only once stored here.
CREATE TABLE mobile_originated (
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
CREATE INDEX mobile_originated_received_idx ON mobile_originated (received_at);
