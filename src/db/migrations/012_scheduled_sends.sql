-- Scheduled sends: a message accepted with send_at waits (status enqueued, its charge held) until
-- then. Its dispatch job is inserted with the same start time, so no worker fetches it earlier;
-- the claim refuses it before send_at all the same, and its validity counts from send_at.
-- NULL for a message sent at once.
ALTER TABLE messages ADD COLUMN send_at timestamptz;
