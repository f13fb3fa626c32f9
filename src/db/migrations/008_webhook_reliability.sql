-- shiri:no-transaction: its index builds are concurrent, so it runs a statement at a time and
-- every statement is harmless to repeat (src/db/migration-file.ts). It was a single transaction that
-- built the indexes with writes held off; the schema it leaves is the same (docs/decisions/0004).

-- Callbacks are not lost: the previous signing secret keeps signing during a grace period after
-- a rotation, stranded events are found and requeued, and an account lists its deliveries.

-- The secret a rotation replaced, and when: callbacks carry its signature too until
-- WEBHOOK_SECRET_GRACE_HOURS after previous_secret_replaced_at, so a receiver still on the old
-- secret keeps verifying while it is redeployed.
ALTER TABLE account_webhooks ADD COLUMN IF NOT EXISTS previous_signing_secret text;
ALTER TABLE account_webhooks ADD COLUMN IF NOT EXISTS previous_secret_replaced_at timestamptz;

-- What the stranded-event sweeper scans: pending events that a job was said to carry.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_events_enqueued_pending_idx ON webhook_events (enqueued_at)
  WHERE state = 'pending' AND enqueued_at IS NOT NULL;

-- GET /api/v1/webhook/deliveries and range redelivery: an account's events by time.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_events_account_created_idx ON webhook_events (account_id, created_at);
