-- shiri:no-transaction: its index build on message_parts is concurrent, so it runs a statement at
-- a time and every statement is harmless to repeat (src/db/migration-file.ts); each rename is
-- guarded, as a repeated one would fail. It was a single transaction that built the index with
-- writes held off; the schema it leaves is the same (docs/decisions/0004).

-- Links apart from operators, and receipts matched whatever the carrier writes (issue 25;
-- docs/decisions/0001-receipt-ids-and-links.md).

-- A segment belongs to the link (SMPP account) that accepted it, and receipts are matched per
-- link: one link may carry several operators, an operator may move between links. The default
-- links are named after their operators, so every recorded segment keeps matching.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
              WHERE table_schema = current_schema() AND table_name = 'message_parts' AND column_name = 'operator') THEN
    ALTER TABLE message_parts RENAME COLUMN operator TO link;
  END IF;
END
$$;
-- The segment's id as a number (lower case, no leading zeros) when that differs from the id as
-- written: a receipt that writes the number another way finds the segment by it.
ALTER TABLE message_parts ADD COLUMN IF NOT EXISTS smsc_number text;
CREATE INDEX CONCURRENTLY IF NOT EXISTS message_parts_smsc_number_idx ON message_parts (link, smsc_number, accepted_at DESC)
  WHERE smsc_number IS NOT NULL;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
              WHERE table_schema = current_schema() AND table_name = 'early_receipts' AND column_name = 'operator') THEN
    ALTER TABLE early_receipts RENAME COLUMN operator TO link;
  END IF;
END
$$;
-- number_key: the receipt's id as a number; number_keys: every key a segment's id may have for it.
ALTER TABLE early_receipts ADD COLUMN IF NOT EXISTS number_key text, ADD COLUMN IF NOT EXISTS number_keys text[];
CREATE INDEX IF NOT EXISTS early_receipts_number_idx ON early_receipts (link, number_key) WHERE number_key IS NOT NULL;

-- Bind slots belong to links; the holder says whether its session is bound, so a worker standing
-- by knows whether the link is up elsewhere or down (an operator then fails over to its next link).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
              WHERE table_schema = current_schema() AND table_name = 'smpp_bind_slots' AND column_name = 'operator') THEN
    ALTER TABLE smpp_bind_slots RENAME COLUMN operator TO link;
  END IF;
END
$$;
ALTER TABLE smpp_bind_slots ADD COLUMN IF NOT EXISTS bound boolean NOT NULL DEFAULT false;

-- A mobile-originated message came over a link; its operator is the sender's number's.
ALTER TABLE mobile_originated ADD COLUMN IF NOT EXISTS link text;
UPDATE mobile_originated SET link = operator WHERE link IS NULL;

-- How each link's receipts were found to name their segments, summed over every worker: what the
-- carrier turned out to write (`shiri carrier ids`).
CREATE TABLE IF NOT EXISTS link_id_matches (
  link text NOT NULL,
  relation text NOT NULL,
  matches bigint NOT NULL DEFAULT 0,
  last_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (link, relation)
);
