-- The two foreign keys of messages cost a check per row, run one row at a time at the end of the
-- insert: 20,000 of them for one 10,000-recipient bulk send, a quarter of its time in Postgres
-- (the request's median 241-277 ms with them, 178-214 ms without:
-- docs/decisions/0024-what-the-send-path-does-not-pay-for.md).
-- What they guarded holds by construction: a send's bulk row and its messages are written by one
-- statement from one list (src/sending/record-send.ts), a bulk row is deleted only once no message
-- names it (src/retention/messages.ts), and no code deletes an account; one with messages also
-- has keys and a balance row whose own foreign keys refuse its deletion. Callback events and the
-- ledger carry no foreign key to messages for the same reason.
ALTER TABLE messages DROP CONSTRAINT messages_account_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_bulk_id_fkey;
