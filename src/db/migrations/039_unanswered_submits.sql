-- What a message's tries left unknown at the carrier.
--
-- unanswered: how many of its tries put a segment on the wire of a connection that stayed up and heard
-- no answer, not even within the late-answer window. The carrier may have taken each of them, so
-- such a message is tried at most DISPATCH_MAX_UNANSWERED_SENDS times and then fails NO_ANSWER: a
-- carrier that takes a submit and never answers it must not get it again after every back-off
-- until its validity ends. A constant default: the column is added without rewriting the table.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS unanswered smallint NOT NULL DEFAULT 0;

-- maybe_at_carrier: some try put a segment on the wire and heard no answer (timed out, or lost
-- with its connection), so the carrier may have it though no segment is recorded. A message
-- between tries without it has reached nobody: its sender may still cancel it.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS maybe_at_carrier boolean NOT NULL DEFAULT false;
