-- refusals: how many of a message's tries the carrier refused with a status that may pass
-- (ESME_RSUBMITFAIL, ESME_RUNKNOWNERR, …: "retry" in src/smpp/command-status.ts). Such a message is
-- tried at most DISPATCH_MAX_REFUSALS times and then fails with the carrier's status: a number the
-- SMSC always refuses so must not be submitted again after every back-off until its validity ends.
-- Throttling and other link-level statuses are not counted. A constant default: the column is
-- added without rewriting the table.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS refusals smallint NOT NULL DEFAULT 0;
