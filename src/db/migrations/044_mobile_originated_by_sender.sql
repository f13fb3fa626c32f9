-- shiri:no-transaction: a concurrent index build, harmless to repeat (src/db/migration-file.ts).

-- A sender's mobile-originated PDUs in the order they were stored: a PDU the same as one stored
-- within the repeat window is the SMSC's repeat only if nothing else from that sender was stored
-- after that copy (src/inbound/store-parts.ts), read here from that copy's id on. Without it that
-- check would read every PDU of the window.
CREATE INDEX CONCURRENTLY IF NOT EXISTS mobile_originated_sender_idx ON mobile_originated (source_addr, id);
