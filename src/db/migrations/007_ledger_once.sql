-- Money moves once per message: a second capture or a second release of one message's hold is
-- refused by the database, whatever the code path. messages.billing already guards each move
-- (held → captured or released, once), so no existing row can violate these.

CREATE UNIQUE INDEX ledger_entries_capture_once_idx ON ledger_entries (message_id) WHERE kind = 'capture';
CREATE UNIQUE INDEX ledger_entries_release_once_idx ON ledger_entries (message_id) WHERE kind = 'release';
