-- ignores_opt_outs: true for a message that goes to a number whatever its account's opt-out list
-- says (the confirmation of a STOP), false for every other message, which honours the list. The
-- worker looks at the list again when it claims a message: a send that raced the number's opt-out
-- (each transaction blind to the other's uncommitted rows) is then failed OPTED_OUT, unsent.
-- Null: written by a version before this one (during a rolling upgrade, or queued before it),
-- which cannot tell a confirmation: judged as that version judged it, by whether the number opted
-- out after the message was made. Nullable with no default: added without rewriting the table.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS ignores_opt_outs boolean;
