-- ignores_opt_outs: true for a message that goes to a number whatever its account's opt-out list
-- says (the confirmation of a STOP); null for every other message, which honours the list. The
-- worker looks at the list again when it claims a message: a send that raced the number's opt-out
-- (each transaction blind to the other's uncommitted rows) is then failed OPTED_OUT, unsent.
-- Nullable with no default: added without rewriting the table, and null costs a row nothing.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS ignores_opt_outs boolean;
