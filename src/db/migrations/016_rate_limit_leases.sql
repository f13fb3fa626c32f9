-- Rate limit leases, now called slices (src/limits/slices.ts): an API process takes a small slice of a bucket ahead
-- of its requests, in the same statement as a request it could not decide alone, and decides the
-- requests that fit in the slice without asking the database. The slice is taken from the shared
-- bucket like a request's cost, so what every process admits together never exceeds the limit;
-- what a process did not use is given back (rate_limit_give_back) when its lease ends.
-- rate_limit_lease replaces rate_limit_take (migration 010) in this release; that one stays for
-- the previous release's API processes while a rolling upgrade runs, rewritten at the end of this
-- file to decide through rate_limit_lease, so the buckets' arithmetic lives in one function.

-- rate_limit_take (migration 010) with, for each request, the slice its process would like of each
-- of its buckets (0: none). A request is decided exactly as there; only when it is allowed does
-- its process get a slice of each bucket it asked for, which is:
--   * none when the limit is below 100 a window: too small to slice usefully, every request of
--     it stays an exact decision of its own;
--   * at most a tenth of the limit, so that a few processes' slices cannot hold much of it;
--   * none of the bucket's last tenth: near its limit a bucket is decided request by request,
--     so a refusal (429, Retry-After) is always the bucket's own state, not slices held elsewhere.
-- `leased` is the slice granted; remaining and reset_ms are the bucket's after the request and
-- before the slice (the slice is still the process's to admit: the client may still use it).
CREATE FUNCTION rate_limit_lease(
  p_keys uuid[],
  p_accounts uuid[],
  p_recipients integer[],
  p_key_leases integer[],
  p_account_leases integer[],
  p_recipient_leases integer[],
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
  retry_ms integer,
  leased integer
) LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
  -- As in rate_limit_take, plus s_want: the slice asked for, per (request, limit).
  s_request integer[];
  s_scope text[];
  s_row integer[];
  s_column integer[];
  s_cost integer[];
  s_quota integer[];
  s_window double precision[];
  s_want integer[];
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
  slice_cap double precision;
  slice integer;
BEGIN
  WITH requests AS (
    SELECT r.i::integer AS request, r.k, r.a, COALESCE(r.n, 0) AS n,
           COALESCE(r.kl, 0) AS key_want, COALESCE(r.al, 0) AS account_want,
           COALESCE(r.nl, 0) AS recipients_want,
           COALESCE(o.requests_per_second, p_key_requests_per_second) AS key_quota,
           COALESCE(o.requests_per_second, p_account_requests_per_second) AS account_quota,
           COALESCE(o.recipients_per_minute, p_recipients_per_minute) AS recipients_quota
      FROM unnest(p_keys, p_accounts, p_recipients, p_key_leases, p_account_leases, p_recipient_leases)
           WITH ORDINALITY AS r (k, a, n, kl, al, nl, i)
      LEFT JOIN account_rate_limits o ON o.account_id = r.a
  ), slots AS (
    SELECT q.request, s.ord, s.scope, s.subject, s.col, s.cost, s.quota, s.window_ms, s.want,
           dense_rank() OVER (ORDER BY s.subject)::integer AS row_index
      FROM requests q
     CROSS JOIN LATERAL (VALUES
        (1, 'key', 'key:' || q.k, 1, 1,
         CASE WHEN q.account_quota > 0 AND q.key_quota >= q.account_quota THEN 0 ELSE q.key_quota END,
         1000.0::double precision, q.key_want),
        (2, 'account', 'account:' || q.a, 1, 1, q.account_quota, 1000.0::double precision, q.account_want),
        (3, 'recipients', 'account:' || q.a, 2, q.n, q.recipients_quota, 60000.0::double precision,
         q.recipients_want)
     ) AS s (ord, scope, subject, col, cost, quota, window_ms, want)
     WHERE s.quota > 0 AND s.cost > 0
  )
  SELECT array_agg(request ORDER BY request, ord), array_agg(scope ORDER BY request, ord),
         array_agg(row_index ORDER BY request, ord), array_agg(col ORDER BY request, ord),
         array_agg(cost ORDER BY request, ord), array_agg(quota ORDER BY request, ord),
         array_agg(window_ms ORDER BY request, ord), array_agg(want ORDER BY request, ord),
         array_agg(DISTINCT subject ORDER BY subject),
         count(DISTINCT subject) FILTER (
           WHERE NOT EXISTS (SELECT 1 FROM rate_limit_state t WHERE t.subject = slots.subject))
    INTO s_request, s_scope, s_row, s_column, s_cost, s_quota, s_window, s_want, r_subject, missing_count
    FROM slots;
  n := coalesce(cardinality(s_request), 0);
  IF n = 0 THEN
    RETURN;
  END IF;

  -- Rows locked in subject order, in one pass, as in rate_limit_take (and rate_limit_give_back):
  -- statements from any number of processes never deadlock.
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
      IF level + s_cost[j] > s_quota[j] + 1e-9 THEN
        ok := false;
      END IF;
    END LOOP;
    FOR j IN i..last_slot LOOP
      rate := s_quota[j] / s_window[j];
      level := CASE s_column[j] WHEN 1 THEN r_requests[s_row[j]] ELSE r_recipients[s_row[j]] END;
      IF ok THEN
        level := level + s_cost[j];
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
      -- The slice: at most a tenth of the limit, never from the bucket's last tenth.
      slice := 0;
      IF ok AND s_want[j] > 0 AND s_quota[j] >= 100 THEN
        slice_cap := floor(s_quota[j] / 10.0);
        slice := greatest(0, least(s_want[j]::double precision, slice_cap,
                                   floor(s_quota[j] - slice_cap - level + 1e-9)))::integer;
        level := level + slice;
      END IF;
      leased := slice;
      IF s_column[j] = 1 THEN
        r_requests[s_row[j]] := level;
      ELSE
        r_recipients[s_row[j]] := level;
      END IF;
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

-- Gives back what processes did not use of their slices (and recipients of sends not accepted),
-- many subjects in one call: p_requests from each subject's requests bucket, p_recipients from
-- its recipients bucket. Levels drain linearly down to 0, so taking from the stored level is the
-- same as taking from the level now. Rows are locked in subject order first, as every other
-- statement on the buckets locks them, so that no two statements deadlock.
CREATE FUNCTION rate_limit_give_back(
  p_subjects text[],
  p_requests double precision[],
  p_recipients double precision[]
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM rate_limit_state t WHERE t.subject = ANY (p_subjects) ORDER BY t.subject FOR UPDATE;
  UPDATE rate_limit_state t
     SET requests_level = greatest(0, t.requests_level - b.requests),
         recipients_level = greatest(0, t.recipients_level - b.recipients)
    FROM (SELECT u.subject, sum(u.requests) AS requests, sum(u.recipients) AS recipients
            FROM unnest(p_subjects, p_requests, p_recipients) AS u (subject, requests, recipients)
           GROUP BY u.subject) b
   WHERE t.subject = b.subject;
END
$$;

-- rate_limit_take (migration 010) as rate_limit_lease without slices: same arguments, same rows.
CREATE OR REPLACE FUNCTION rate_limit_take(
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
) LANGUAGE sql AS $$
  SELECT l.request, l.scope, l.quota, l.window_seconds, l.allowed, l.remaining, l.reset_ms, l.retry_ms
    FROM rate_limit_lease(p_keys, p_accounts, p_recipients,
                          array_fill(0, ARRAY[cardinality(p_keys)]),
                          array_fill(0, ARRAY[cardinality(p_keys)]),
                          array_fill(0, ARRAY[cardinality(p_keys)]),
                          p_key_requests_per_second, p_account_requests_per_second,
                          p_recipients_per_minute) l
$$;
