-- Every signing secret a rotation replaced (one that had been shown), with when: each signs beside
-- the current one for WEBHOOK_SECRET_GRACE_HOURS after it was replaced. account_webhooks kept one
-- such secret (previous_signing_secret), so a second rotation within the grace period stopped the
-- first old secret signing at once. Those two columns are still written, for processes of the
-- version before during a rolling upgrade, and no longer read.
CREATE TABLE IF NOT EXISTS webhook_retired_secrets (
  account_id uuid NOT NULL REFERENCES accounts (id),
  secret text NOT NULL,
  replaced_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, replaced_at, secret)
);

INSERT INTO webhook_retired_secrets (account_id, secret, replaced_at)
SELECT account_id, previous_signing_secret, previous_secret_replaced_at
  FROM account_webhooks
 WHERE previous_signing_secret IS NOT NULL AND previous_secret_replaced_at IS NOT NULL
ON CONFLICT DO NOTHING;
