-- Keys that can only do their job (issue 28): scopes (NULL = every scope, as every key had
-- before), the client addresses a key may be used from (NULL = any) and an end of life.
ALTER TABLE api_keys
  ADD COLUMN scopes text[],
  ADD COLUMN allowed_ips cidr[],
  ADD COLUMN expires_at timestamptz,
  -- Its secret ends with a checksum (src/accounts/token-format.ts): every key made from now on.
  -- While no active key lacks one, a token with a wrong checksum is refused without a lookup.
  ADD COLUMN checksummed boolean NOT NULL DEFAULT false;

-- The key lookup every request makes (migration 015) returns them too, and an expired key is no
-- key at all (a 401, like a revoked one).
DROP FUNCTION api_keys_by_hash(text[], integer);
CREATE FUNCTION api_keys_by_hash(p_hashes text[], p_stale_after_seconds integer)
RETURNS TABLE (
  id uuid,
  token_hash text,
  account_id uuid,
  currency text,
  stale boolean,
  has_webhook boolean,
  webhook_events text[],
  scopes text[],
  allowed_ips text[],
  expires_at timestamptz
) LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT k.id, k.token_hash, k.account_id, a.currency,
         (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => p_stale_after_seconds)),
         w.account_id IS NOT NULL, w.events, k.scopes, k.allowed_ips::text[], k.expires_at
    FROM api_keys k JOIN accounts a ON a.id = k.account_id
    LEFT JOIN account_webhooks w ON w.account_id = k.account_id AND w.url IS NOT NULL
   WHERE k.token_hash = ANY (p_hashes) AND k.active AND (k.expires_at IS NULL OR k.expires_at > now());
END
$$;
