-- A keyword reply to a number on the account's opt-out list (a HELP after a STOP) is written as a
-- message failed OPTED_OUT and reaches no carrier: its inbound message says so ('opted_out'),
-- not 'sent' (src/inbound/replies.ts). NOT VALID: every existing row already holds, and the
-- table may be large.
ALTER TABLE inbound_messages DROP CONSTRAINT inbound_messages_reply_check;
ALTER TABLE inbound_messages ADD CONSTRAINT inbound_messages_reply_check CHECK (
  reply IN ('pending', 'sent', 'opted_out', 'not_sent')
) NOT VALID;
