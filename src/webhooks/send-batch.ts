import type { Pool, Queryable } from "../db/pool.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { destinationGroup, JOB_BUDGET_MS, type WebhookJob } from "../queue/webhook-jobs.ts";
import type { CallbackSettings } from "./account-webhooks.ts";
import type { CallbackConnections } from "./callback-connections.ts";
import type { HostOutcome } from "./host-circuits.ts";
import { type AttemptOutcome, type PostOptions, postCallback } from "./post-callback.ts";
import { stopKey, stoppedError, stopUrls } from "./refusals.ts";
import { nextAttemptAt, type RetryPolicy } from "./retry.ts";

/** An outbox row as sending its callback needs it; the payload is sent as stored, never rebuilt. */
export interface EventRow {
  id: string;
  account_id: string;
  type: string;
  url: string;
  payload: string;
  state: string;
  attempts: number;
  created_at: Date;
}

export const LOAD_EVENTS = `
  SELECT id, account_id, type, url, payload::text AS payload, state, attempts, created_at
    FROM webhook_events WHERE id = ANY ($1::uuid[])`;

export interface BatchContext {
  pool: Pool;
  logger: Logger;
  metrics: Metrics;
  post: PostOptions & { connections: CallbackConnections };
  /** Requests of a job written before their answers, at most, on its own connection (1: none). */
  pipelineDepth?: number;
  retry: RetryPolicy;
  stopping: () => boolean;
  /** Told when events were put off to a later time (a retry, a hand-back): the due watch looks again. */
  dueLater?: () => void;
}

interface Recorded {
  event: EventRow;
  state: "delivered" | "pending" | "failed";
  at: Date;
  status: number | null;
  error: string | null;
  retryAt: Date | null;
  refused: boolean;
  /** Ended by a 410: answered one, or not sent as its URL is stopped (never redelivered). */
  endedByGone: boolean;
  /** Not sent: its URL is stopped. */
  stopped: boolean;
}

/**
 * The URLs stopped by a 410 (src/webhooks/refusals.ts), by stopKey, as read when the jobs were
 * fetched; a 410 answered meanwhile is added, so the other jobs of the fetch see it at once.
 */
export type StoppedUrls = Map<string, Date>;

/**
 * Sends one job's events, one request after another, to their shared destination host: each
 * event alone, or, for an account webhook that takes batches, up to its batch size together.
 * With a pipelining depth above 1, up to that many requests go out on the job's connection
 * before their answers, still in order. Once the host fails an attempt in a way worth retrying
 * (no answer, any status but 2xx and 410), the rest of the job is not tried: it is handed back to
 * the outbox to wait out the same back-off, so a dead receiver costs one request per job (up to
 * the depth when pipelining), not one per event. Outcomes are recorded in one statement per job.
 * Says whether the host answered and whether a request of it timed out (its circuit's input).
 */
export async function sendCallbackBatch(
  ctx: BatchContext,
  job: WebhookJob,
  events: Map<string, EventRow>,
  settings: Map<string, CallbackSettings>,
  stopped: StoppedUrls = new Map(),
): Promise<HostOutcome> {
  const started = Date.now();
  const host: HostOutcome = { answered: false, timedOut: false };
  const recorded: Recorded[] = [];
  const handBack: Array<{ id: string; attempt: number }> = [];
  const stops: Array<{ accountId: string; url: string; eventId: string }> = [];
  let backOffUntil: Date | null = null;
  // Requests written and not yet answered, oldest first: at most the pipelining depth of them.
  const inFlight: Array<{ request: CallbackRequest; outcome: Promise<AttemptOutcome> }> = [];
  const depth = ctx.pipelineDepth ?? 1;
  const own = depth > 1 ? ctx.post.connections.forJob(depth) : null;
  const post = own ? { ...ctx.post, connections: own } : ctx.post;
  const settleOldest = async () => {
    const sent = inFlight.shift();
    if (!sent) return;
    const { request } = sent;
    const outcome = await sent.outcome;
    if (outcome.kind === "unsent") {
      // Never written, behind a request that got no answer: not an attempt. It waits with the
      // rest of the batch, whose back-off that timeout has set.
      for (const event of request.events) handBack.push({ id: event.id, attempt: event.attempts });
      backOffUntil ??= new Date(Date.now() + ctx.retry.baseMs);
      return;
    }
    if (outcome.status !== null) host.answered = true;
    if (outcome.kind === "retry" && outcome.timedOut) host.timedOut = true;
    const [first] = request.events;
    for (const event of request.events) recorded.push(decide(event, outcome, ctx.retry));
    const key = outcome.status === GONE && first ? stopKey(first.account_id, request.url) : null;
    // The receiver refuses this account's callbacks to this URL: none is sent to it again (once
    // said, by whichever of the job's requests, or of the fetch's jobs, heard it first).
    if (first && key !== null && !stopped.has(key)) {
      stopped.set(key, new Date());
      stops.push({ accountId: first.account_id, url: request.url, eventId: first.id });
    }
    if (outcome.kind === "retry" && !backOffUntil) {
      const retryAt = recorded.at(-1)?.retryAt;
      backOffUntil = retryAt ?? new Date(Date.now() + ctx.retry.baseMs);
    }
  };
  try {
    for (const request of requestsOf(job, events, settings)) {
      // A request's events share one account and URL.
      const [first] = request.events;
      // The key parses the URL: only worth it when some URL is stopped, which is rare.
      const stoppedAt =
        stopped.size > 0 && first ? stopped.get(stopKey(first.account_id, request.url)) : undefined;
      if (stoppedAt) {
        for (const event of request.events) recorded.push(notSent(event, stoppedAt));
        continue;
      }
      if (backOffUntil || ctx.stopping() || Date.now() - started > JOB_BUDGET_MS) {
        for (const event of request.events) handBack.push({ id: event.id, attempt: event.attempts });
        continue;
      }
      // Stored payloads are JSON texts: a batch's body is them joined into an array, as stored.
      const payloads = request.events.map((e) => e.payload).join(",");
      const callback = {
        url: request.url,
        events: request.events,
        batched: request.batched,
        body: request.batched ? `[${payloads}]` : payloads,
        secrets: request.secrets,
      };
      inFlight.push({ request, outcome: postCallback(callback, post) });
      if (inFlight.length >= depth) await settleOldest();
    }
    while (inFlight.length > 0) await settleOldest();
  } finally {
    own?.release();
  }
  // The stop before the outcomes: an event seen failed by its 410 means the URL is stopped, for
  // every fetch from then on.
  await stopUrls(ctx.pool, stops);
  await record(ctx.pool, recorded);
  for (const stop of stops)
    ctx.logger.warn(
      { event_id: stop.eventId, account_id: stop.accountId, host: destinationGroup(stop.url) },
      "callback answered 410 Gone: the account's callbacks to this URL are stopped until it is set again",
    );
  if (handBack.length > 0) await giveBack(ctx.pool, handBack, backOffUntil ?? new Date());
  if (handBack.length > 0 || recorded.some((r) => r.retryAt)) ctx.dueLater?.();
  report(ctx, recorded);
  return host;
}

interface CallbackRequest {
  url: string;
  events: EventRow[];
  batched: boolean;
  secrets: readonly string[];
}

/**
 * The job's events still due for the attempt it was made for, as requests: consecutive events of
 * one account bound for its webhook go together up to the webhook's batch size; every other
 * event (a send's own webhook_url, a webhook taking one at a time) goes alone.
 */
function requestsOf(
  job: WebhookJob,
  events: Map<string, EventRow>,
  settings: Map<string, CallbackSettings>,
): CallbackRequest[] {
  const requests: CallbackRequest[] = [];
  for (const ref of job.events) {
    const event = events.get(ref.id);
    const account = event && settings.get(event.account_id);
    // A stale duplicate (the attempt was already recorded) or a settled event: nothing to send.
    if (!event || !account || event.state !== "pending" || event.attempts !== ref.attempt) continue;
    const batchable = account.batchSize > 1 && event.url === account.webhookUrl;
    const last = requests.at(-1);
    const joins =
      batchable &&
      last?.batched &&
      last.url === event.url &&
      last.events[0]?.account_id === event.account_id &&
      last.events.length < account.batchSize;
    if (joins) last.events.push(event);
    else
      requests.push({
        url: event.url,
        events: [event],
        batched: batchable,
        secrets: account.secrets,
      });
  }
  return requests;
}

/** An attempt made: what its event comes to. */
function decide(
  event: EventRow,
  outcome: Exclude<AttemptOutcome, { kind: "unsent" }>,
  policy: RetryPolicy,
): Recorded {
  const at = new Date();
  const retryAt =
    outcome.kind === "retry" ? nextAttemptAt(event.created_at, at, event.attempts + 1, policy) : null;
  return {
    event,
    state: outcome.kind === "delivered" ? "delivered" : retryAt ? "pending" : "failed",
    at,
    status: outcome.status,
    error: outcome.kind === "delivered" ? null : outcome.error,
    retryAt,
    refused: outcome.kind === "failed" && outcome.refused === true,
    endedByGone: outcome.status === GONE,
    stopped: false,
  };
}

/** An event failed without a request: its URL answered 410 (outcomeOfStatus fails a 410 for good). */
function notSent(event: EventRow, stoppedAt: Date): Recorded {
  return {
    event,
    state: "failed",
    at: new Date(),
    status: null,
    error: stoppedError(stoppedAt),
    retryAt: null,
    refused: false,
    endedByGone: true,
    stopped: true,
  };
}

const GONE = 410;

/*
 * The events of a list still pending at the attempt the list was made for, locked, each looked up
 * by key. With the guard in the update's own WHERE the planner scanned an index of pending events
 * (dead entries included, ~18,000 a statement between vacuums) and hashed the list against it:
 * 1.5 s of Postgres's 6.0 s of statement time in 20,000 single sends, 0.5 s this way. (The same
 * trap as ownProcessing in src/lifecycle/outcomes.ts.)
 */
const stillPending = (list: string, columns: string) => `
  SELECT o.* FROM unnest(${list}) AS o(${columns})
   CROSS JOIN LATERAL (SELECT 1 FROM webhook_events w
                        WHERE w.id = o.id AND w.attempts = o.attempt AND w.state = 'pending'
                        FOR NO KEY UPDATE) locked`;

/** Guarded by the attempt count, so two runs of one job (pg-boss is at least once) record once. */
async function record(pool: Pool, rs: Recorded[]): Promise<void> {
  if (rs.length === 0) return;
  // Named (planned once per connection): the key lookups fix its plan, so the generic plan is the
  // one planning would pick each time. Statements that find rows by `= ANY` stay unnamed: a generic
  // plan made while a fresh table was small keeps seq-scanning it as it grows (auto_explain).
  await pool.query({
    name: "shiri_record_attempts",
    text: `WITH due AS (${stillPending(
      "$1::uuid[], $2::int[], $3::text[], $4::timestamptz[], $5::int[], $6::text[], $7::timestamptz[], $8::bool[], $9::bool[]",
      "id, attempt, state, at, status, error, retry_at, ended_by_gone, sent",
    )})
     UPDATE webhook_events e
        SET state = o.state, attempts = e.attempts + o.sent::int,
            last_attempt_at = CASE WHEN o.sent THEN o.at ELSE e.last_attempt_at END,
            last_status = o.status, last_error = o.error, ended_by_gone = o.ended_by_gone,
            next_attempt_at = COALESCE(o.retry_at, e.next_attempt_at),
            enqueued_at = CASE WHEN o.state = 'pending' THEN NULL ELSE e.enqueued_at END,
            completed_at = CASE WHEN o.state = 'pending' THEN NULL ELSE o.at END
       FROM due o WHERE e.id = o.id`,
    values: [
      rs.map((r) => r.event.id),
      rs.map((r) => r.event.attempts),
      rs.map((r) => r.state),
      rs.map((r) => r.at),
      rs.map((r) => r.status),
      rs.map((r) => r.error),
      rs.map((r) => r.retryAt),
      rs.map((r) => r.endedByGone),
      rs.map((r) => !r.stopped),
    ],
  });
}

/** Events not tried: back to the outbox, due again at `at`, their attempt count untouched; how many. */
export async function giveBack(
  pool: Queryable,
  refs: ReadonlyArray<{ id: string; attempt: number }>,
  at: Date,
): Promise<number> {
  const { rowCount } = await pool.query(
    `WITH due AS (${stillPending("$1::uuid[], $2::int[]", "id, attempt")})
     UPDATE webhook_events e SET enqueued_at = NULL, next_attempt_at = $3 FROM due o WHERE e.id = o.id`,
    [refs.map((r) => r.id), refs.map((r) => r.attempt), at],
  );
  return rowCount ?? 0;
}

/** Metrics and logs of a job's outcomes: the counters moved once per outcome, not once per event. */
function report(ctx: BatchContext, recorded: readonly Recorded[]): void {
  const counts = new Map<string, number>();
  const count = (outcome: string) => counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  for (const r of recorded) {
    const log = () => ({
      event_id: r.event.id,
      attempt: r.event.attempts + 1,
      status: r.status,
      error: r.error,
    });
    if (r.state === "delivered") {
      count("delivered");
      ctx.metrics.webhookLatency.observe((r.at.getTime() - r.event.created_at.getTime()) / 1000);
    } else if (r.state === "pending") {
      count("retry");
      ctx.logger.info({ ...log(), retry_at: r.retryAt }, "webhook attempt failed; will retry");
    } else if (r.stopped) {
      // Not sent: its URL answered 410 earlier (logged then).
      count("stopped");
    } else {
      // Given up for good: "refused" when the destination address was, "failed" otherwise.
      count(r.refused ? "refused" : "failed");
      ctx.logger.warn(log(), "webhook event failed for good");
    }
  }
  for (const [outcome, n] of counts) ctx.metrics.webhookDeliveries.inc({ outcome }, n);
}
