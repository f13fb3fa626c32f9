-- Callbacks in batches: the account webhook says how many events one request may carry. 1 (every
-- existing webhook) keeps one event per request, the body a single event; above 1, the events
-- bound for the webhook go together, the body a JSON array of them.
ALTER TABLE account_webhooks ADD COLUMN batch_size int NOT NULL DEFAULT 1
  CONSTRAINT account_webhooks_batch_size_check CHECK (batch_size BETWEEN 1 AND 100);
