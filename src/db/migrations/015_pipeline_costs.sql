-- Two costs the whole-pipeline benchmark found in Postgres
-- (docs/decisions/0024-what-the-send-path-does-not-pay-for.md).

-- A message row is updated two or three times within a second of its insert (claim, acceptance,
-- delivery). At fillfactor 80 only about half of those updates stayed on their page (HOT); the
-- others wrote a new entry in each of the table's indexes. 60 leaves room for them: 83 % HOT in a
-- 20,000-message run. The price is a table about a third larger for the same rows.
ALTER TABLE messages SET (fillfactor = 60);

-- The API's key lookup, which every request makes (src/accounts/api-keys.ts). As a prepared
-- statement Postgres planned it anew on every call (a custom plan for each array of hashes),
-- and planning cost seven times the lookup itself. A function keeps one generic plan per
-- session: the unique index on token_hash, whatever the array holds.
CREATE FUNCTION api_keys_by_hash(p_hashes text[], p_stale_after_seconds integer)
RETURNS TABLE (
  id uuid,
  token_hash text,
  account_id uuid,
  currency text,
  stale boolean,
  has_webhook boolean,
  webhook_events text[]
) LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT k.id, k.token_hash, k.account_id, a.currency,
         (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => p_stale_after_seconds)),
         w.account_id IS NOT NULL, w.events
    FROM api_keys k JOIN accounts a ON a.id = k.account_id
    LEFT JOIN account_webhooks w ON w.account_id = k.account_id AND w.url IS NOT NULL
   WHERE k.token_hash = ANY (p_hashes) AND k.active;
END
$$;
