-- shiri:no-transaction: its index builds are concurrent, so it runs a statement at a time and
-- every statement is harmless to repeat (src/db/migration-file.ts). It was a single transaction that
-- built the indexes with writes held off; the schema it leaves is the same (docs/decisions/0004).

-- Money moves once per message: a second capture or a second release of one message's hold is
-- refused by the database, whatever the code path. messages.billing already guards each move
-- (held → captured or released, once), so no existing row can violate these.

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS ledger_entries_capture_once_idx ON ledger_entries (message_id) WHERE kind = 'capture';
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS ledger_entries_release_once_idx ON ledger_entries (message_id) WHERE kind = 'release';
