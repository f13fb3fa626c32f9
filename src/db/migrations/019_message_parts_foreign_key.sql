-- The foreign key from message_parts to messages cost a check per segment recorded, run one row at
-- a time at the end of each insert, and each check took a KEY SHARE lock on the message's row (a
-- WAL record of its own): 20,000 of each for 20,000 single sends
-- (docs/decisions/0024-what-the-send-path-does-not-pay-for.md).
-- What it guarded holds by construction, as for the keys migration 018 dropped: segments are
-- recorded only for messages a worker has claimed (src/dispatch/settle.ts, parts-recorder.ts), and
-- retention deletes a message and its segments in one statement (src/retention/messages.ts).
ALTER TABLE message_parts DROP CONSTRAINT message_parts_message_id_fkey;
