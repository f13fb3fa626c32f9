-- Rate limits (src/limits): requests per second per API key and per account, recipients per
-- minute per account. Defaults come from the configuration; an account may have its own.

-- An account's own limits; NULL means the configured default, 0 means no limit.
-- requests_per_second applies to the account and to each of its keys.
CREATE TABLE account_rate_limits (
  account_id uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  requests_per_second integer CHECK (requests_per_second >= 0),
  recipients_per_minute integer CHECK (recipients_per_minute >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The limits' state, one row per API key ('key:<id>') and per account ('account:<id>'), so that
-- a request writes one or two rows. Each bucket is a level (requests or recipients taken, in
-- those units) as of a time; it drains at the limit's pace, so a new limit applies at once to
-- what was taken before. UNLOGGED: the state of a window of a second or a minute is not worth
-- a WAL record, so taking from a bucket never waits for a disk flush; a crash empties the table,
-- which forgets at most one window's use. A low fillfactor keeps each update of a hot row on its
-- page (HOT), with no index write.
CREATE UNLOGGED TABLE rate_limit_state (
  subject text PRIMARY KEY,
  requests_level double precision NOT NULL DEFAULT 0,
  requests_at timestamptz NOT NULL DEFAULT now(),
  recipients_level double precision NOT NULL DEFAULT 0,
  recipients_at timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 50);

-- Decides a batch of requests in order, in one call: each request takes one from its key's and
-- its account's requests per second and, when it sends, its recipients from the account's
-- recipients per minute, all or nothing. A bucket of limit L per window W holds L and drains L
-- per W: a request of cost c fits when the level drained to now plus c stays within L. A key
-- limit at or above its account's is left out: the account's binds first. Rows are locked in
-- subject order, in one pass, so batches from any number of processes never deadlock; the
-- database's clock is the only clock. One row per request and limit that applied: allowed (the request's
-- decision), remaining and reset_ms (after it: until the bucket is empty), retry_ms (until this
-- limit would let the request through; -1 when it never can: a cost above the limit).
CREATE FUNCTION rate_limit_take(
  p_keys uuid[],
  p_accounts uuid[],
  p_recipients integer[],
  p_key_requests_per_second integer,
  p_account_requests_per_second integer,
  p_recipients_per_minute integer
) RETURNS TABLE (
  request integer,
  scope text,
  quota integer,
  window_seconds integer,
  allowed boolean,
  remaining integer,
  reset_ms integer,
  retry_ms integer
) LANGUAGE plpgsql
-- No plan here gains from the values it runs with: each is planned once per session.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
  -- One element per (request, limit) that applies, ordered by request; s_row indexes the r_
  -- arrays and s_column says which of the row's buckets (1 requests, 2 recipients).
  s_request integer[];
  s_scope text[];
  s_row integer[];
  s_column integer[];
  s_cost integer[];
  s_quota integer[];
  s_window double precision[];
  -- One element per distinct subject, in subject order: its buckets' levels and their times
  -- (ms since the epoch), and whether the row is to be written.
  r_subject text[];
  r_requests double precision[];
  r_requests_at double precision[];
  r_recipients double precision[];
  r_recipients_at double precision[];
  r_changed boolean[];
  missing_count integer;
  found_count integer;
  now_ms double precision;
  n integer;
  i integer := 1;
  j integer;
  last_slot integer;
  ok boolean;
  level double precision;
  rate double precision;
BEGIN
  WITH requests AS (
    SELECT r.i::integer AS request, r.k, r.a, COALESCE(r.n, 0) AS n,
           COALESCE(o.requests_per_second, p_key_requests_per_second) AS key_quota,
           COALESCE(o.requests_per_second, p_account_requests_per_second) AS account_quota,
           COALESCE(o.recipients_per_minute, p_recipients_per_minute) AS recipients_quota
      FROM unnest(p_keys, p_accounts, p_recipients) WITH ORDINALITY AS r (k, a, n, i)
      LEFT JOIN account_rate_limits o ON o.account_id = r.a
  ), slots AS (
    SELECT q.request, s.ord, s.scope, s.subject, s.col, s.cost, s.quota, s.window_ms,
           dense_rank() OVER (ORDER BY s.subject)::integer AS row_index
      FROM requests q
     CROSS JOIN LATERAL (VALUES
        (1, 'key', 'key:' || q.k, 1, 1,
         CASE WHEN q.account_quota > 0 AND q.key_quota >= q.account_quota THEN 0 ELSE q.key_quota END,
         1000.0::double precision),
        (2, 'account', 'account:' || q.a, 1, 1, q.account_quota, 1000.0::double precision),
        (3, 'recipients', 'account:' || q.a, 2, q.n, q.recipients_quota, 60000.0::double precision)
     ) AS s (ord, scope, subject, col, cost, quota, window_ms)
     WHERE s.quota > 0 AND s.cost > 0
  )
  SELECT array_agg(request ORDER BY request, ord), array_agg(scope ORDER BY request, ord),
         array_agg(row_index ORDER BY request, ord), array_agg(col ORDER BY request, ord),
         array_agg(cost ORDER BY request, ord), array_agg(quota ORDER BY request, ord),
         array_agg(window_ms ORDER BY request, ord), array_agg(DISTINCT subject ORDER BY subject),
         count(DISTINCT subject) FILTER (
           WHERE NOT EXISTS (SELECT 1 FROM rate_limit_state t WHERE t.subject = slots.subject))
    INTO s_request, s_scope, s_row, s_column, s_cost, s_quota, s_window, r_subject, missing_count
    FROM slots;
  n := coalesce(cardinality(s_request), 0);
  IF n = 0 THEN
    RETURN;
  END IF;

  -- Lock the rows in subject order, in one pass, so that batches from any number of processes
  -- never deadlock: a plain lock when they all exist (rows are never deleted), else an upsert
  -- that creates the missing ones and locks the others (rewriting them unchanged).
  IF missing_count = 0 THEN
    SELECT count(*), array_agg(q.requests_level ORDER BY q.subject),
           array_agg((extract(epoch FROM q.requests_at) * 1000)::double precision ORDER BY q.subject),
           array_agg(q.recipients_level ORDER BY q.subject),
           array_agg((extract(epoch FROM q.recipients_at) * 1000)::double precision ORDER BY q.subject)
      INTO found_count, r_requests, r_requests_at, r_recipients, r_recipients_at
      FROM (SELECT t.* FROM rate_limit_state t
             WHERE t.subject = ANY (r_subject) ORDER BY t.subject FOR UPDATE) q;
  END IF;
  IF missing_count > 0 OR found_count < cardinality(r_subject) THEN
    WITH q AS (
      INSERT INTO rate_limit_state AS t (subject)
      SELECT x FROM unnest(r_subject) AS x ORDER BY x
      ON CONFLICT (subject) DO UPDATE SET requests_level = t.requests_level
      RETURNING t.*
    )
    SELECT array_agg(q.requests_level ORDER BY q.subject),
           array_agg((extract(epoch FROM q.requests_at) * 1000)::double precision ORDER BY q.subject),
           array_agg(q.recipients_level ORDER BY q.subject),
           array_agg((extract(epoch FROM q.recipients_at) * 1000)::double precision ORDER BY q.subject)
      INTO r_requests, r_requests_at, r_recipients, r_recipients_at
      FROM q;
  END IF;
  r_changed := array_fill(false, ARRAY[cardinality(r_subject)]);
  now_ms := extract(epoch FROM clock_timestamp()) * 1000;

  WHILE i <= n LOOP
    last_slot := i;
    WHILE last_slot < n AND s_request[last_slot + 1] = s_request[i] LOOP
      last_slot := last_slot + 1;
    END LOOP;
    -- Drain each bucket to now, then all or nothing: the request fits only if it fits every
    -- limit that applies to it.
    ok := true;
    FOR j IN i..last_slot LOOP
      rate := s_quota[j] / s_window[j];
      IF s_column[j] = 1 THEN
        r_requests[s_row[j]] := greatest(0, r_requests[s_row[j]] - greatest(0, now_ms - r_requests_at[s_row[j]]) * rate);
        r_requests_at[s_row[j]] := now_ms;
        level := r_requests[s_row[j]];
      ELSE
        r_recipients[s_row[j]] := greatest(0, r_recipients[s_row[j]] - greatest(0, now_ms - r_recipients_at[s_row[j]]) * rate);
        r_recipients_at[s_row[j]] := now_ms;
        level := r_recipients[s_row[j]];
      END IF;
      -- The epsilon keeps a float a hair over a whole number from refusing it.
      IF level + s_cost[j] > s_quota[j] + 1e-9 THEN
        ok := false;
      END IF;
    END LOOP;
    FOR j IN i..last_slot LOOP
      rate := s_quota[j] / s_window[j];
      level := CASE s_column[j] WHEN 1 THEN r_requests[s_row[j]] ELSE r_recipients[s_row[j]] END;
      IF ok THEN
        level := level + s_cost[j];
        IF s_column[j] = 1 THEN
          r_requests[s_row[j]] := level;
        ELSE
          r_recipients[s_row[j]] := level;
        END IF;
        r_changed[s_row[j]] := true;
      END IF;
      request := s_request[j];
      scope := s_scope[j];
      quota := s_quota[j];
      window_seconds := (s_window[j] / 1000)::integer;
      allowed := ok;
      remaining := greatest(0, floor(s_quota[j] - level + 1e-9));
      reset_ms := ceil(level / rate);
      retry_ms := CASE
        WHEN ok THEN 0
        WHEN s_cost[j] > s_quota[j] THEN -1
        ELSE greatest(0, ceil((level + s_cost[j] - s_quota[j]) / rate))
      END;
      RETURN NEXT;
    END LOOP;
    i := last_slot + 1;
  END LOOP;

  UPDATE rate_limit_state t
     SET requests_level = u.requests, requests_at = to_timestamp(u.requests_at / 1000),
         recipients_level = u.recipients, recipients_at = to_timestamp(u.recipients_at / 1000)
    FROM unnest(r_subject, r_requests, r_requests_at, r_recipients, r_recipients_at, r_changed)
           AS u (subject, requests, requests_at, recipients, recipients_at, changed)
   WHERE u.changed AND t.subject = u.subject;
END
$$;
