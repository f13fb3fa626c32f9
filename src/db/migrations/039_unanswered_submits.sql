-- How many of a message's tries put a segment on the wire of a connection that stayed up and heard
-- no answer, not even within the late-answer window. The carrier may have taken each of them, so
-- such a message is tried at most DISPATCH_MAX_UNANSWERED_SENDS times and then fails NO_ANSWER: a
-- carrier that takes a submit and never answers it must not get it again after every back-off
-- until its validity ends. A constant default: the column is added without rewriting the table.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS unanswered smallint NOT NULL DEFAULT 0;
