-- shiri:no-transaction: its index drop is concurrent, so it runs a statement at a time, and each
-- statement is harmless to repeat (src/db/migration-file.ts).

-- A capture moves no balance: it turns held money into charged money. Since this migration the
-- ledger writes one capture row for each account a settle captures from, its amount the sum of the
-- messages' charges and its message_id empty; each message's own capture is its billing moving
-- from held to captured, once, under the message's row lock (docs/decisions/0032). The unique
-- index on one capture row a message has nothing left to hold. Releases, which move the balance,
-- keep a row a message and their unique index.

DROP INDEX CONCURRENTLY IF EXISTS ledger_entries_capture_once_idx;

-- The guard that index gave, whatever the code path, now on the message: its billing moves from
-- held and from nowhere else, so a message is captured or released once. The trigger runs only
-- when an update names the column and moves it from a state other than held.
CREATE OR REPLACE FUNCTION messages_billing_moves_once() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the billing of message % has moved already (%), it cannot become %',
    OLD.id, OLD.billing, NEW.billing USING ERRCODE = 'check_violation';
END
$$;

CREATE OR REPLACE TRIGGER messages_billing_moves_once
  BEFORE UPDATE OF billing ON messages
  FOR EACH ROW WHEN (OLD.billing <> 'held' AND NEW.billing IS DISTINCT FROM OLD.billing)
  EXECUTE FUNCTION messages_billing_moves_once();
