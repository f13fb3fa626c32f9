-- Callbacks a customer can size: a webhook names the event types it wants. NULL means all of
-- them, so every row written before this migration keeps receiving everything.

-- The account webhook's filter.
ALTER TABLE account_webhooks ADD COLUMN events text[];
ALTER TABLE account_webhooks ADD CONSTRAINT account_webhooks_events_check CHECK (
  events IS NULL OR (cardinality(events) > 0 AND events <@ ARRAY['message.enqueued', 'message.success',
    'message.failed', 'message.delivered', 'message.undelivered']::text[])
);

-- The filter of a send's own webhook_url, copied to each of its messages (as webhook_url is).
-- The constraint is NOT VALID: it holds for every new row without scanning the existing ones
-- (all NULL) under this migration's lock on a possibly large table.
ALTER TABLE messages ADD COLUMN webhook_events text[];
ALTER TABLE messages ADD CONSTRAINT messages_webhook_events_check CHECK (
  webhook_events IS NULL OR (cardinality(webhook_events) > 0 AND webhook_events <@ ARRAY['message.enqueued',
    'message.success', 'message.failed', 'message.delivered', 'message.undelivered']::text[])
) NOT VALID;
