-- shiri:no-transaction: a concurrent index build, harmless to repeat (src/db/migration-file.ts).

-- Messages with an expiry of their own (a validity_period, or a delivery window that delayed them;
-- migration 030), by that expiry: the validity sweeper finds those past it here (src/lifecycle/expire.ts),
-- from the open-messages watermark on. Only rows that have one, and expires_at is written once and
-- never updated, so status updates stay HOT (005).
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_expires_idx ON messages (expires_at) WHERE expires_at IS NOT NULL;
