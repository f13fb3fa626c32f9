-- GENERATED FILE: do not edit. The schema after every migration in src/db/migrations/, read
-- from the catalogs by src/db/schema-snapshot.ts; `npm run schema:write` rewrites it and
-- test/integration/schema-snapshot.test.ts fails while it is stale. pg-boss's schema (pgboss)
-- is pg-boss's own and left out. A change to the schema is a new migration, never an edit here.
-- Migrations applied: 35, the last 046_refused_tries.sql.

-- Sequences

CREATE SEQUENCE public.ledger_entries_id_seq AS bigint START 1 INCREMENT 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 OWNED BY public.ledger_entries.id;
CREATE SEQUENCE public.mobile_originated_id_seq AS bigint START 1 INCREMENT 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 OWNED BY public.mobile_originated.id;

-- Tables

CREATE TABLE public.account_balances (
  account_id uuid NOT NULL,
  balance bigint DEFAULT 0 NOT NULL,
  CONSTRAINT account_balances_pkey PRIMARY KEY (account_id),
  CONSTRAINT account_balances_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id),
  CONSTRAINT account_balances_balance_check CHECK ((balance >= 0))
) WITH (autovacuum_vacuum_scale_factor=0, autovacuum_vacuum_threshold=1000, fillfactor=50);

CREATE TABLE public.account_rate_limits (
  account_id uuid NOT NULL,
  requests_per_second integer,
  recipients_per_minute integer,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT account_rate_limits_pkey PRIMARY KEY (account_id),
  CONSTRAINT account_rate_limits_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE,
  CONSTRAINT account_rate_limits_recipients_per_minute_check CHECK ((recipients_per_minute >= 0)),
  CONSTRAINT account_rate_limits_requests_per_second_check CHECK ((requests_per_second >= 0))
);

CREATE TABLE public.account_send_defaults (
  account_id uuid NOT NULL,
  smart_encoding boolean DEFAULT false NOT NULL,
  deliver_start text,
  deliver_end text,
  deliver_time_zone text,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT account_send_defaults_pkey PRIMARY KEY (account_id),
  CONSTRAINT account_send_defaults_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id),
  CONSTRAINT account_send_defaults_check CHECK ((((deliver_start IS NULL) = (deliver_end IS NULL)) AND ((deliver_start IS NULL) = (deliver_time_zone IS NULL)))),
  CONSTRAINT account_send_defaults_check1 CHECK ((deliver_start <> deliver_end)),
  CONSTRAINT account_send_defaults_deliver_end_check CHECK ((deliver_end ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'::text)),
  CONSTRAINT account_send_defaults_deliver_start_check CHECK ((deliver_start ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'::text)),
  CONSTRAINT account_send_defaults_deliver_time_zone_check CHECK (((length(deliver_time_zone) >= 1) AND (length(deliver_time_zone) <= 64)))
);

CREATE TABLE public.account_webhooks (
  account_id uuid NOT NULL,
  url text,
  signing_secret text NOT NULL,
  secret_created_at timestamp with time zone DEFAULT now() NOT NULL,
  secret_shown_at timestamp with time zone,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  events text[],
  previous_signing_secret text,
  previous_secret_replaced_at timestamp with time zone,
  batch_size integer DEFAULT 1 NOT NULL,
  CONSTRAINT account_webhooks_pkey PRIMARY KEY (account_id),
  CONSTRAINT account_webhooks_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id),
  CONSTRAINT account_webhooks_batch_size_check CHECK (((batch_size >= 1) AND (batch_size <= 100))),
  CONSTRAINT account_webhooks_events_check CHECK (((events IS NULL) OR ((cardinality(events) > 0) AND (events <@ ARRAY['message.enqueued'::text, 'message.success'::text, 'message.failed'::text, 'message.delivered'::text, 'message.undelivered'::text, 'message.received'::text, 'contact.opted_out'::text, 'contact.opted_in'::text])))) NOT VALID,
  CONSTRAINT account_webhooks_url_check CHECK (((url IS NULL) OR (url ~ '^https?://'::text)))
);

CREATE TABLE public.accounts (
  id uuid NOT NULL,
  name text NOT NULL,
  currency text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT accounts_pkey PRIMARY KEY (id),
  CONSTRAINT accounts_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
  CONSTRAINT accounts_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

CREATE TABLE public.api_keys (
  id uuid NOT NULL,
  account_id uuid NOT NULL,
  name text NOT NULL,
  token_hash text NOT NULL,
  active boolean DEFAULT true NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone,
  deleted_at timestamp with time zone,
  last_used_at timestamp with time zone,
  scopes text[],
  allowed_ips cidr[],
  expires_at timestamp with time zone,
  checksummed boolean DEFAULT false NOT NULL,
  CONSTRAINT api_keys_pkey PRIMARY KEY (id),
  CONSTRAINT api_keys_token_hash_key UNIQUE (token_hash),
  CONSTRAINT api_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id)
);

CREATE UNLOGGED TABLE public.auth_failures (
  address inet NOT NULL,
  window_start timestamp with time zone NOT NULL,
  failures integer NOT NULL,
  CONSTRAINT auth_failures_pkey PRIMARY KEY (address, window_start)
);

CREATE TABLE public.bulk_sends (
  id uuid NOT NULL,
  account_id uuid NOT NULL,
  sender_id text NOT NULL,
  total integer NOT NULL,
  charge bigint NOT NULL,
  currency text NOT NULL,
  webhook_url text,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT bulk_sends_pkey PRIMARY KEY (id),
  CONSTRAINT bulk_sends_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id)
);

CREATE TABLE public.early_receipts (
  link text NOT NULL,
  smsc_id text NOT NULL,
  state text NOT NULL,
  received_at timestamp with time zone DEFAULT now() NOT NULL,
  err text,
  whole_message boolean DEFAULT false NOT NULL,
  submitted_after timestamp with time zone,
  number_key text,
  number_keys text[],
  hex_to_decimal_key text,
  decimal_to_hex_key text,
  CONSTRAINT early_receipts_pkey PRIMARY KEY (link, smsc_id, state)
) WITH (autovacuum_vacuum_scale_factor=0, autovacuum_vacuum_threshold=500);

CREATE TABLE public.idempotency_keys (
  account_id uuid NOT NULL,
  endpoint text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status_code integer NOT NULL,
  response jsonb NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (account_id, endpoint, key),
  CONSTRAINT idempotency_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id)
) WITH (autovacuum_vacuum_scale_factor=0.05);

CREATE TABLE public.inbound_keywords (
  account_id uuid NOT NULL,
  opt_out text[] NOT NULL,
  opt_in text[] NOT NULL,
  help text[] NOT NULL,
  opt_out_reply text,
  opt_in_reply text,
  help_reply text,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT inbound_keywords_pkey PRIMARY KEY (account_id),
  CONSTRAINT inbound_keywords_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id)
);

CREATE TABLE public.inbound_messages (
  id uuid NOT NULL,
  account_id uuid,
  link text NOT NULL,
  operator text NOT NULL,
  "from" text NOT NULL,
  "to" text NOT NULL,
  body text NOT NULL,
  encoding text NOT NULL,
  parts integer NOT NULL,
  complete boolean NOT NULL,
  keyword text,
  keyword_kind text,
  reply text,
  reply_message_id uuid,
  received_at timestamp with time zone NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT inbound_messages_pkey PRIMARY KEY (id),
  CONSTRAINT inbound_messages_encoding_check CHECK ((encoding = ANY (ARRAY['gsm7'::text, 'ascii'::text, 'latin1'::text, 'ucs2'::text]))),
  CONSTRAINT inbound_messages_keyword_kind_check CHECK ((keyword_kind = ANY (ARRAY['opt_out'::text, 'opt_in'::text, 'help'::text]))),
  CONSTRAINT inbound_messages_parts_check CHECK ((parts > 0)),
  CONSTRAINT inbound_messages_reply_check CHECK ((reply = ANY (ARRAY['pending'::text, 'sent'::text, 'opted_out'::text, 'not_sent'::text]))) NOT VALID
);

CREATE TABLE public.inbound_numbers (
  number text NOT NULL,
  account_id uuid NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT inbound_numbers_pkey PRIMARY KEY (number),
  CONSTRAINT inbound_numbers_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id),
  CONSTRAINT inbound_numbers_number_check CHECK ((number ~ '^[0-9]{3,20}$'::text))
);

CREATE TABLE public.ledger_entries (
  id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
  account_id uuid NOT NULL,
  kind text NOT NULL,
  amount bigint NOT NULL,
  message_id uuid,
  bulk_id uuid,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT ledger_entries_pkey PRIMARY KEY (id),
  CONSTRAINT ledger_entries_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id),
  CONSTRAINT ledger_entries_amount_check CHECK ((amount > 0)),
  CONSTRAINT ledger_entries_kind_check CHECK ((kind = ANY (ARRAY['top_up'::text, 'hold'::text, 'capture'::text, 'release'::text])))
) WITH (autovacuum_analyze_scale_factor=0.02, autovacuum_vacuum_insert_scale_factor=0.05);

CREATE TABLE public.link_id_matches (
  link text NOT NULL,
  relation text NOT NULL,
  matches bigint DEFAULT 0 NOT NULL,
  last_at timestamp with time zone DEFAULT now() NOT NULL,
  shown bigint DEFAULT 0 NOT NULL,
  CONSTRAINT link_id_matches_pkey PRIMARY KEY (link, relation)
);

CREATE TABLE public.message_parts (
  message_id uuid NOT NULL,
  part_no smallint NOT NULL,
  link text NOT NULL,
  smsc_id text NOT NULL,
  accepted_at timestamp with time zone DEFAULT now() NOT NULL,
  receipt_state text,
  receipt_at timestamp with time zone,
  receipt_err text,
  smsc_number text,
  sent_after timestamp with time zone,
  CONSTRAINT message_parts_pkey PRIMARY KEY (message_id, part_no),
  CONSTRAINT message_parts_part_no_check CHECK ((part_no > 0))
) WITH (autovacuum_analyze_scale_factor=0.02, autovacuum_vacuum_scale_factor=0.02, autovacuum_vacuum_threshold=5000, fillfactor=85);

CREATE TABLE public.messages (
  id uuid NOT NULL,
  account_id uuid NOT NULL,
  bulk_id uuid,
  "to" text NOT NULL,
  body text NOT NULL,
  sender_id text NOT NULL,
  operator text NOT NULL,
  encoding text NOT NULL,
  segments integer NOT NULL,
  charge bigint NOT NULL,
  charge_currency text NOT NULL,
  operator_response text DEFAULT ''::text NOT NULL,
  status text NOT NULL,
  billing text NOT NULL,
  webhook_url text,
  received_at timestamp with time zone NOT NULL,
  created_at timestamp with time zone NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  delivered_at timestamp with time zone,
  attempts integer DEFAULT 0 NOT NULL,
  locked_until timestamp with time zone,
  last_error text,
  accepted_at timestamp with time zone,
  webhook_events text[],
  locked_by uuid,
  send_at timestamp with time zone,
  validity_period integer,
  expires_at timestamp with time zone,
  deliver_between jsonb,
  smart_encoded boolean,
  unanswered smallint DEFAULT 0 NOT NULL,
  maybe_at_carrier boolean DEFAULT false NOT NULL,
  ignores_opt_outs boolean,
  refusals smallint DEFAULT 0 NOT NULL,
  CONSTRAINT messages_pkey PRIMARY KEY (id),
  CONSTRAINT messages_billing_check CHECK ((billing = ANY (ARRAY['held'::text, 'captured'::text, 'released'::text]))),
  CONSTRAINT messages_charge_check CHECK ((charge >= 0)),
  CONSTRAINT messages_encoding_check CHECK ((encoding = ANY (ARRAY['gsm7'::text, 'ucs2'::text]))),
  CONSTRAINT messages_operator_check CHECK ((operator = ANY (ARRAY[''::text, 'econet'::text, 'netone'::text, 'telecel'::text]))),
  CONSTRAINT messages_segments_check CHECK ((segments > 0)),
  CONSTRAINT messages_status_check CHECK ((status = ANY (ARRAY['created'::text, 'enqueued'::text, 'processing'::text, 'success'::text, 'failed'::text]))),
  CONSTRAINT messages_webhook_events_check CHECK (((webhook_events IS NULL) OR ((cardinality(webhook_events) > 0) AND (webhook_events <@ ARRAY['message.enqueued'::text, 'message.success'::text, 'message.failed'::text, 'message.delivered'::text, 'message.undelivered'::text])))) NOT VALID
) WITH (autovacuum_analyze_scale_factor=0.02, autovacuum_vacuum_scale_factor=0.02, autovacuum_vacuum_threshold=5000, fillfactor=60);

CREATE TABLE public.mobile_originated (
  id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
  operator text NOT NULL,
  source_addr text NOT NULL,
  source_addr_ton smallint NOT NULL,
  source_addr_npi smallint NOT NULL,
  destination_addr text NOT NULL,
  esm_class smallint NOT NULL,
  data_coding smallint NOT NULL,
  body text NOT NULL,
  udh bytea,
  received_at timestamp with time zone DEFAULT now() NOT NULL,
  link text,
  user_data bytea,
  concat_ref integer,
  concat_total smallint,
  concat_seq smallint,
  fingerprint bytea,
  inbound_message_id uuid,
  dest_addr_ton smallint,
  CONSTRAINT mobile_originated_pkey PRIMARY KEY (id)
);

CREATE TABLE public.opt_outs (
  account_id uuid NOT NULL,
  number text NOT NULL,
  source text NOT NULL,
  keyword text,
  inbound_message_id uuid,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT opt_outs_pkey PRIMARY KEY (account_id, number),
  CONSTRAINT opt_outs_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id),
  CONSTRAINT opt_outs_source_check CHECK ((source = ANY (ARRAY['keyword'::text, 'api'::text])))
);

CREATE UNLOGGED TABLE public.rate_limit_state (
  subject text NOT NULL,
  requests_level double precision DEFAULT 0 NOT NULL,
  requests_at timestamp with time zone DEFAULT now() NOT NULL,
  recipients_level double precision DEFAULT 0 NOT NULL,
  recipients_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT rate_limit_state_pkey PRIMARY KEY (subject)
) WITH (fillfactor=50);

CREATE TABLE public.schema_migrations (
  version text NOT NULL,
  applied_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT schema_migrations_pkey PRIMARY KEY (version)
);

CREATE TABLE public.search_cursor_key (
  only_row boolean DEFAULT true NOT NULL,
  secret text NOT NULL,
  CONSTRAINT search_cursor_key_pkey PRIMARY KEY (only_row),
  CONSTRAINT search_cursor_key_only_row_check CHECK (only_row)
);

CREATE TABLE public.sender_ids (
  id uuid NOT NULL,
  account_id uuid NOT NULL,
  address text NOT NULL,
  verification_status text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT sender_ids_pkey PRIMARY KEY (id),
  CONSTRAINT sender_ids_account_id_address_key UNIQUE (account_id, address),
  CONSTRAINT sender_ids_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id),
  CONSTRAINT sender_ids_address_check CHECK ((address ~ '^[A-Za-z0-9]{3,11}$'::text)),
  CONSTRAINT sender_ids_verification_status_check CHECK ((verification_status = ANY (ARRAY['verified'::text, 'pending'::text, 'rejected'::text])))
);

CREATE TABLE public.smpp_bind_slots (
  link text NOT NULL,
  slot integer NOT NULL,
  owner text NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  bound boolean DEFAULT false NOT NULL,
  CONSTRAINT smpp_bind_slots_pkey PRIMARY KEY (link, slot)
);

CREATE TABLE public.upkeep_marks (
  name text NOT NULL,
  at timestamp with time zone NOT NULL,
  CONSTRAINT upkeep_marks_pkey PRIMARY KEY (name)
) WITH (fillfactor=50);

CREATE TABLE public.webhook_events (
  id uuid NOT NULL,
  account_id uuid NOT NULL,
  message_id uuid,
  type text NOT NULL,
  url text NOT NULL,
  payload json NOT NULL,
  state text DEFAULT 'pending'::text NOT NULL,
  attempts integer DEFAULT 0 NOT NULL,
  next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
  enqueued_at timestamp with time zone,
  last_attempt_at timestamp with time zone,
  last_status integer,
  last_error text,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  completed_at timestamp with time zone,
  ended_by_gone boolean DEFAULT false NOT NULL,
  CONSTRAINT webhook_events_pkey PRIMARY KEY (id),
  CONSTRAINT webhook_events_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text]))),
  CONSTRAINT webhook_events_type_check CHECK ((type = ANY (ARRAY['message.enqueued'::text, 'message.success'::text, 'message.failed'::text, 'message.delivered'::text, 'message.undelivered'::text, 'message.received'::text, 'contact.opted_out'::text, 'contact.opted_in'::text]))) NOT VALID
) WITH (autovacuum_analyze_scale_factor=0.02, autovacuum_vacuum_scale_factor=0.02, autovacuum_vacuum_threshold=5000, fillfactor=85);

CREATE TABLE public.webhook_redelivery_budget (
  account_id uuid NOT NULL,
  level double precision DEFAULT 0 NOT NULL,
  at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT webhook_redelivery_budget_pkey PRIMARY KEY (account_id),
  CONSTRAINT webhook_redelivery_budget_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id),
  CONSTRAINT webhook_redelivery_budget_level_check CHECK ((level >= (0)::double precision))
);

CREATE TABLE public.webhook_retired_secrets (
  account_id uuid NOT NULL,
  secret text NOT NULL,
  replaced_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT webhook_retired_secrets_pkey PRIMARY KEY (account_id, replaced_at, secret),
  CONSTRAINT webhook_retired_secrets_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id)
);

CREATE TABLE public.webhook_stopped_urls (
  account_id uuid NOT NULL,
  url text NOT NULL,
  stopped_at timestamp with time zone DEFAULT now() NOT NULL,
  event_id uuid NOT NULL,
  CONSTRAINT webhook_stopped_urls_pkey PRIMARY KEY (account_id, url),
  CONSTRAINT webhook_stopped_urls_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id)
);

-- Indexes (those of a primary key or unique constraint show with its table)

CREATE INDEX api_keys_account_idx ON public.api_keys USING btree (account_id, created_at);
CREATE INDEX bulk_sends_created_idx ON public.bulk_sends USING btree (created_at);
CREATE INDEX early_receipts_number_idx ON public.early_receipts USING btree (link, number_key) WHERE (number_key IS NOT NULL);
CREATE INDEX idempotency_keys_created_idx ON public.idempotency_keys USING btree (created_at);
CREATE INDEX inbound_messages_account_from_idx ON public.inbound_messages USING btree (account_id, "from", received_at, id) WHERE (account_id IS NOT NULL);
CREATE INDEX inbound_messages_account_page_idx ON public.inbound_messages USING btree (account_id, received_at, id) WHERE (account_id IS NOT NULL);
CREATE INDEX inbound_messages_account_to_idx ON public.inbound_messages USING btree (account_id, "to", received_at, id) WHERE (account_id IS NOT NULL);
CREATE INDEX inbound_messages_received_idx ON public.inbound_messages USING btree (received_at);
CREATE INDEX inbound_messages_reply_idx ON public.inbound_messages USING btree (created_at) WHERE (reply = 'pending'::text);
CREATE INDEX inbound_messages_unrouted_idx ON public.inbound_messages USING btree (received_at, id) WHERE (account_id IS NULL);
CREATE INDEX inbound_numbers_account_idx ON public.inbound_numbers USING btree (account_id, number);
CREATE INDEX ledger_entries_account_idx ON public.ledger_entries USING btree (account_id, id);
CREATE INDEX ledger_entries_message_idx ON public.ledger_entries USING btree (message_id) WHERE (message_id IS NOT NULL);
CREATE UNIQUE INDEX ledger_entries_release_once_idx ON public.ledger_entries USING btree (message_id) WHERE (kind = 'release'::text);
CREATE INDEX message_parts_smsc_number_idx ON public.message_parts USING btree (link, smsc_number, accepted_at DESC) WHERE (smsc_number IS NOT NULL);
CREATE INDEX message_parts_smsc_recent_idx ON public.message_parts USING btree (link, smsc_id, accepted_at DESC);
CREATE INDEX messages_account_page_idx ON public.messages USING btree (account_id, created_at, id);
CREATE INDEX messages_account_to_idx ON public.messages USING btree (account_id, "to", created_at, id);
CREATE INDEX messages_bulk_page_idx ON public.messages USING btree (bulk_id, created_at, id) WHERE (bulk_id IS NOT NULL);
CREATE INDEX messages_due_idx ON public.messages USING btree (COALESCE(send_at, received_at));
CREATE INDEX messages_expires_idx ON public.messages USING btree (expires_at) WHERE (expires_at IS NOT NULL);
CREATE INDEX mobile_originated_fingerprint_idx ON public.mobile_originated USING btree (fingerprint, received_at) WHERE (fingerprint IS NOT NULL);
CREATE INDEX mobile_originated_received_idx ON public.mobile_originated USING btree (received_at);
CREATE INDEX mobile_originated_waiting_idx ON public.mobile_originated USING btree (link, source_addr, destination_addr, concat_ref, concat_total) WHERE ((inbound_message_id IS NULL) AND (concat_total IS NOT NULL));
CREATE INDEX mobile_originated_waiting_since_idx ON public.mobile_originated USING btree (received_at) WHERE ((inbound_message_id IS NULL) AND (concat_total IS NOT NULL));
CREATE INDEX opt_outs_account_page_idx ON public.opt_outs USING btree (account_id, created_at, number);
CREATE INDEX webhook_events_account_created_idx ON public.webhook_events USING btree (account_id, created_at);
CREATE INDEX webhook_events_completed_idx ON public.webhook_events USING btree (completed_at) WHERE (completed_at IS NOT NULL);
CREATE INDEX webhook_events_due_idx ON public.webhook_events USING btree (next_attempt_at) WHERE (enqueued_at IS NULL);
CREATE INDEX webhook_events_enqueued_pending_idx ON public.webhook_events USING btree (enqueued_at) WHERE ((state = 'pending'::text) AND (enqueued_at IS NOT NULL));
CREATE INDEX webhook_events_failed_idx ON public.webhook_events USING btree (account_id, created_at) WHERE (state = 'failed'::text);

-- Functions

CREATE OR REPLACE FUNCTION public.api_keys_by_hash(p_hashes text[], p_stale_after_seconds integer)
 RETURNS TABLE(id uuid, token_hash text, account_id uuid, currency text, stale boolean, has_webhook boolean, webhook_events text[], scopes text[], allowed_ips text[], expires_at timestamp with time zone)
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.messages_billing_moves_once()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'the billing of message % has moved already (%), it cannot become %',
    OLD.id, OLD.billing, NEW.billing USING ERRCODE = 'check_violation';
END
$function$;

CREATE OR REPLACE FUNCTION public.rate_limit_give_back(p_subjects text[], p_requests double precision[], p_recipients double precision[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.rate_limit_lease(p_keys uuid[], p_accounts uuid[], p_recipients integer[], p_key_leases integer[], p_account_leases integer[], p_recipient_leases integer[], p_key_requests_per_second integer, p_account_requests_per_second integer, p_recipients_per_minute integer)
 RETURNS TABLE(request integer, scope text, quota integer, window_seconds integer, allowed boolean, remaining integer, reset_ms integer, retry_ms integer, leased integer)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.rate_limit_take(p_keys uuid[], p_accounts uuid[], p_recipients integer[], p_key_requests_per_second integer, p_account_requests_per_second integer, p_recipients_per_minute integer)
 RETURNS TABLE(request integer, scope text, quota integer, window_seconds integer, allowed boolean, remaining integer, reset_ms integer, retry_ms integer)
 LANGUAGE sql
AS $function$
  SELECT l.request, l.scope, l.quota, l.window_seconds, l.allowed, l.remaining, l.reset_ms, l.retry_ms
    FROM rate_limit_lease(p_keys, p_accounts, p_recipients,
                          array_fill(0, ARRAY[cardinality(p_keys)]),
                          array_fill(0, ARRAY[cardinality(p_keys)]),
                          array_fill(0, ARRAY[cardinality(p_keys)]),
                          p_key_requests_per_second, p_account_requests_per_second,
                          p_recipients_per_minute) l
$function$;

-- Triggers

CREATE TRIGGER messages_billing_moves_once BEFORE UPDATE OF billing ON public.messages FOR EACH ROW WHEN (((old.billing <> 'held'::text) AND (new.billing IS DISTINCT FROM old.billing))) EXECUTE FUNCTION public.messages_billing_moves_once();
