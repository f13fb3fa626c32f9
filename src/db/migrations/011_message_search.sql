-- shiri:no-transaction: its index builds are concurrent, so it runs a statement at a time and
-- every statement is harmless to repeat (src/db/migration-file.ts). It was a single transaction that
-- built the indexes with writes held off; the schema it leaves is the same (docs/decisions/0004).

-- Message search (GET /api/v1/sms, its CSV export, GET /api/v1/sms/bulk/{bulk_id}).
--
-- Pages are read newest first by (created_at, id), a keyset that never changes after insert.
-- Every index here is on columns written once, at insert: the pipeline's updates of a message
-- (status, operator_response, attempts, leases, delivered_at) stay HOT (migration 005). There is
-- deliberately no index on status or operator: status changes several times per message, and an
-- index on it would make every one of those updates write new index entries. Both are filtered
-- on the rows a page reads, at most a bounded window of them (src/search/search-messages.ts).

-- The account's messages in page order; replaces (account_id, created_at), which every query
-- that used it (balances, audits) still finds as the prefix.
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_account_page_idx ON messages (account_id, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS messages_account_idx;

-- A bulk send's messages in page order; replaces (bulk_id) with the same prefix.
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_bulk_page_idx ON messages (bulk_id, created_at, id) WHERE bulk_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS messages_bulk_idx;

-- One recipient's messages: the only selective filter the two above cannot serve.
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_account_to_idx ON messages (account_id, "to", created_at, id);

-- The key that signs search cursors, shared by every API process through the database. Two
-- random UUIDs: 244 bits from the server's strong random source.
CREATE TABLE IF NOT EXISTS search_cursor_key (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  secret text NOT NULL
);
INSERT INTO search_cursor_key (secret)
VALUES (replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))
ON CONFLICT (only_row) DO NOTHING;
