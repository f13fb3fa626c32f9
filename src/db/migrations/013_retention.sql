-- shiri:no-transaction: its index builds are concurrent, so it runs a statement at a time and
-- every statement is harmless to repeat (src/db/migration-file.ts). It was a single transaction that
-- built the indexes with writes held off; the schema it leaves is the same (docs/decisions/0004).

-- Retention: old final messages (and their parts), settled callback events, old mobile-originated
-- messages and idempotency keys are deleted a chunk at a time (src/retention). The ledger is never
-- deleted; ledger_entries.message_id and .bulk_id have carried no foreign key since 001, so a
-- ledger row outlives the message it billed and deleting a message never touches the ledger.

-- Messages by the time they were due (send_at for a scheduled message, else received_at): what
-- retention deletes by (oldest first), and what the held-balance sampler and the validity sweeper
-- read from a watermark on instead of scanning the whole table. By the due time, not received_at,
-- so that a message scheduled 30 days ahead does not hold the watermark back 30 days. Both columns
-- are written once and never updated, so status updates stay HOT (005).
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_due_idx ON messages ((COALESCE(send_at, received_at)));

-- Bulk sends whose messages are all gone are deleted after them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS bulk_sends_created_idx ON bulk_sends (created_at);

-- Watermarks of the upkeep passes. 'open_messages': every message not yet final (success or
-- failed) was due at or after `at`; the samplers move it forward as messages become final.
CREATE TABLE IF NOT EXISTS upkeep_marks (
  name text PRIMARY KEY,
  at timestamptz NOT NULL
) WITH (fillfactor = 50);

-- One look at the whole table, once, here; after this the mark only moves forward.
INSERT INTO upkeep_marks (name, at)
SELECT 'open_messages', LEAST(min(COALESCE(send_at, received_at)), now() - interval '1 minute')
  FROM messages WHERE status NOT IN ('success', 'failed')
ON CONFLICT (name) DO NOTHING;
