import type { Job, PgBoss } from "pg-boss";
import type { Config } from "../config.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../logger.ts";
import { signingSecrets } from "./account-webhooks.ts";
import { webhookAttempts, webhookDeliveryLag, webhookEventsFailed } from "./metrics.ts";
import { type AttemptOutcome, callbackAgents, postCallback } from "./post-callback.ts";
import { WEBHOOK_QUEUE, type WebhookJob } from "./queue.ts";
import { relayDueEvents } from "./relay.ts";
import { nextAttemptAt, type RetryPolicy } from "./retry.ts";

export interface WebhookDeliveryOptions {
  timeoutMs: number;
  /** Requests in flight per destination host, across all workers (pg-boss group concurrency). */
  concurrencyPerHost: number;
  /** Requests in flight in this process, all hosts together. */
  maxInFlight: number;
  retry: RetryPolicy;
  /** How often an idle worker looks for due events and jobs. */
  pollMs: number;
  allowPrivate: boolean;
}

interface EventRow {
  id: string;
  account_id: string;
  type: string;
  url: string;
  payload: string;
  state: string;
  attempts: number;
  created_at: Date;
}

const RELAY_BATCH = 1000;

/** A sleep that a wake() ends early; a wake() with nobody asleep makes the next sleep return at once. */
class Waker {
  #pending = false;
  #wake: (() => void) | null = null;
  wake(): void {
    if (this.#wake) this.#wake();
    else this.#pending = true;
  }
  sleep(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}

/**
 * The webhook stage of a worker process: a relay loop that turns due outbox events into pg-boss
 * jobs, and a delivery loop that fetches those jobs and POSTs each event. Each request is
 * bounded by its timeout, the host's share by pg-boss group concurrency and the process's by
 * maxInFlight, and a fetch never waits for a request: a receiver that hangs holds a few slots of
 * its own host for a few seconds, never the loop, sending or dispatch.
 */
export function startWebhookDelivery(deps: {
  pool: Pool;
  boss: PgBoss;
  logger: Logger;
  options: WebhookDeliveryOptions;
}): { stop(): Promise<void> } {
  const { pool, boss, options } = deps;
  const logger = deps.logger.child({ stage: "webhooks" });
  const agents = callbackAgents();
  const inFlight = new Set<Promise<void>>();
  const relayWaker = new Waker();
  const deliveryWaker = new Waker();
  let stopped = false;

  async function relayLoop(): Promise<void> {
    while (!stopped) {
      try {
        const moved = await relayDueEvents(pool, boss, RELAY_BATCH);
        if (moved > 0) deliveryWaker.wake();
        if (moved === RELAY_BATCH) continue; // a backlog: keep going without a pause
      } catch (err) {
        logger.error({ err }, "webhook relay failed; retrying");
      }
      await relayWaker.sleep(options.pollMs);
    }
  }

  async function deliveryLoop(): Promise<void> {
    while (!stopped) {
      const free = options.maxInFlight - inFlight.size;
      if (free <= 0) {
        await deliveryWaker.sleep(options.pollMs);
        continue;
      }
      let jobs: Job<WebhookJob>[];
      try {
        jobs = await boss.fetch<WebhookJob>(WEBHOOK_QUEUE, {
          batchSize: free,
          groupConcurrency: options.concurrencyPerHost,
        });
        if (jobs.length > 0) await startAttempts(jobs);
      } catch (err) {
        // Jobs fetched but not started expire and come back; the outbox guards against doubles.
        logger.error({ err }, "webhook fetch failed; retrying");
        jobs = [];
      }
      if (jobs.length === 0) await deliveryWaker.sleep(options.pollMs);
    }
  }

  async function startAttempts(jobs: Job<WebhookJob>[]): Promise<void> {
    const { rows } = await pool.query<EventRow>(
      `SELECT id, account_id, type, url, payload::text AS payload, state, attempts, created_at
         FROM webhook_events WHERE id = ANY ($1::uuid[])`,
      [jobs.map((j) => j.data.eventId)],
    );
    const events = new Map(rows.map((r) => [r.id, r]));
    const secrets = await signingSecrets(pool, [...new Set(rows.map((r) => r.account_id))]);
    for (const job of jobs) {
      const attempt = runAttempt(job, events.get(job.data.eventId), secrets).finally(() => {
        inFlight.delete(attempt);
        deliveryWaker.wake();
      });
      inFlight.add(attempt);
    }
  }

  async function runAttempt(
    job: Job<WebhookJob>,
    event: EventRow | undefined,
    secrets: Map<string, string>,
  ): Promise<void> {
    try {
      const secret = event && secrets.get(event.account_id);
      // A stale duplicate (the attempt was already recorded) or a settled event: nothing to send.
      if (event && secret && event.state === "pending" && event.attempts === job.data.attempt) {
        const outcome = await postCallback(
          { url: event.url, eventId: event.id, eventType: event.type, body: event.payload, secret },
          { timeoutMs: options.timeoutMs, allowPrivate: options.allowPrivate, agents },
        );
        await recordOutcome(event, outcome);
      }
      await boss.complete(WEBHOOK_QUEUE, job.id);
    } catch (err) {
      // Left active, the job expires and pg-boss runs it again.
      logger.error({ err, event_id: job.data.eventId }, "webhook attempt could not be recorded");
    }
  }

  async function recordOutcome(event: EventRow, outcome: AttemptOutcome): Promise<void> {
    const now = new Date();
    const retryAt =
      outcome.kind === "retry"
        ? nextAttemptAt(event.created_at, now, event.attempts + 1, options.retry)
        : null;
    const state = outcome.kind === "delivered" ? "delivered" : retryAt ? "pending" : "failed";
    const error = outcome.kind === "delivered" ? null : outcome.error;
    // Guarded by the attempt count, so two runs of one job (pg-boss is at least once) record once.
    await pool.query(
      `UPDATE webhook_events
          SET state = $3::text, attempts = attempts + 1, last_attempt_at = $4::timestamptz,
              last_status = $5, last_error = $6, next_attempt_at = COALESCE($7::timestamptz, next_attempt_at),
              enqueued_at = CASE WHEN $3::text = 'pending' THEN NULL ELSE enqueued_at END,
              completed_at = CASE WHEN $3::text = 'pending' THEN NULL ELSE $4::timestamptz END
        WHERE id = $1 AND attempts = $2 AND state = 'pending'`,
      [event.id, event.attempts, state, now, outcome.status, error, retryAt],
    );
    const log = { event_id: event.id, attempt: event.attempts + 1, status: outcome.status, error };
    if (state === "delivered") {
      webhookAttempts.inc({ outcome: "delivered" });
      webhookDeliveryLag.observe((now.getTime() - event.created_at.getTime()) / 1000);
    } else if (state === "pending") {
      webhookAttempts.inc({ outcome: "retry" });
      logger.info({ ...log, retry_at: retryAt }, "webhook attempt failed; will retry");
    } else {
      webhookAttempts.inc({ outcome: "failed" });
      webhookEventsFailed.inc();
      logger.warn(log, "webhook event failed for good");
    }
  }

  const loops = Promise.all([relayLoop(), deliveryLoop()]);
  return {
    async stop() {
      stopped = true;
      relayWaker.wake();
      deliveryWaker.wake();
      await loops;
      // Every request is bounded by its timeout, so this wait is too.
      await Promise.allSettled([...inFlight]);
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** The delivery settings from the service configuration. */
export function webhookDeliveryOptions(config: Config): WebhookDeliveryOptions {
  return {
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    concurrencyPerHost: config.WEBHOOK_CONCURRENCY_PER_HOST,
    maxInFlight: config.WEBHOOK_MAX_IN_FLIGHT,
    retry: {
      baseMs: config.WEBHOOK_RETRY_BASE_MS,
      maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS,
      windowMs: config.WEBHOOK_RETRY_HOURS * 3_600_000,
    },
    pollMs: config.WEBHOOK_POLL_MS,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
  };
}
