-- sent_after: no earlier than this did the segment's submit go out (its batch's claim, on the
-- database's clock). A receipt kept aside in early_receipts since before it is for another submit
-- that had the same id (an SMSC that restarted its counter) and is never applied to this one.
-- Null for segments recorded before this migration or by the settle alone: no bound then.
-- Nullable with no default: added without rewriting the table.
ALTER TABLE message_parts ADD COLUMN IF NOT EXISTS sent_after timestamptz;
