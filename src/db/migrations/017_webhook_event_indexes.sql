-- Two indexes of the callback outbox that cost more than they served
-- (docs/decisions/0024-what-the-send-path-does-not-pay-for.md).
-- Every event is written three times within a second (its insert, the relay's enqueue, its
-- delivery), and each of those writes adds an entry to every index of the table.

-- Nothing looks events up by message: the deliveries API lists an account's events by time.
DROP INDEX webhook_events_message_idx;

-- Only the backlog gauge read it (src/samplers.ts), and the planner chose it for
-- the delivery's own update, reading every pending entry, dead ones included, to find a hundred
-- events by id. A pending event is either due (webhook_events_due_idx) or carried by a job
-- (webhook_events_enqueued_pending_idx): the gauge counts those two instead.
DROP INDEX webhook_events_pending_idx;
