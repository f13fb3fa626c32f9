import type { Queryable } from "../db/pool.ts";

/**
 * The pg-boss queue of callbacks (its name, "webhook-delivery", is stored in pg-boss and stays). A
 * job carries a few events bound for one destination host (its group), sent one after another:
 * pg-boss's group concurrency then bounds the requests in flight per host across every worker,
 * and the queue's cost is per batch, not per event.
 */
export const WEBHOOK_QUEUE = "webhook-delivery";

export interface WebhookJob {
  /** Each event with the attempt this job is for: an event that has moved on is skipped. */
  events: Array<{ id: string; attempt: number }>;
}

/** A job stops sending after this long and hands its remaining events back to the outbox. */
export const JOB_BUDGET_MS = 60_000;

/**
 * A running job is touched at least this often (a third of it, src/webhooks/callbacks.ts); one
 * not touched for this long lost its worker, and pg-boss's supervision fails it. Until then it
 * counts as active, so it holds one of its host's slots (WEBHOOK_CONCURRENCY_PER_HOST).
 */
export const WEBHOOK_JOB_HEARTBEAT_SECONDS = 10;

export const WEBHOOK_QUEUE_OPTIONS = {
  // Retries of events are scheduled by the outbox (src/webhooks/retry.ts); a job retry only covers a
  // worker that died mid-job, found by the job's heartbeat within seconds (the expiry, well after the
  // job's own time budget, is the backstop).
  retryLimit: 10,
  retryDelay: 1,
  retryBackoff: true,
  retryDelayMax: 60,
  heartbeatSeconds: WEBHOOK_JOB_HEARTBEAT_SECONDS,
  expireInSeconds: 180,
  // The outbox keeps each event's history; a finished job is of no further use.
  deleteAfterSeconds: 3600,
};

/** The group of a destination: its host and port, as one receiver is usually one server. */
export function destinationGroup(url: string): string {
  try {
    return new URL(url).host.toLowerCase() || "invalid";
  } catch {
    return "invalid";
  }
}

/** An event to put in a job: its id, where it goes and the attempt the job is for. */
export interface EventForJob {
  id: string;
  url: string;
  attempt: number;
}

/**
 * The callback jobs for some events: grouped by destination host (their order kept), at most
 * `batchSize` events a job, so pg-boss's group concurrency bounds each host's requests in flight.
 */
export function webhookJobs(
  events: readonly EventForJob[],
  batchSize: number,
): Array<{ data: WebhookJob; group: { id: string } }> {
  const byGroup = new Map<string, WebhookJob["events"]>();
  for (const event of events) {
    const group = destinationGroup(event.url);
    const list = byGroup.get(group) ?? [];
    list.push({ id: event.id, attempt: event.attempt });
    byGroup.set(group, list);
  }
  const jobs: Array<{ data: WebhookJob; group: { id: string } }> = [];
  for (const [group, list] of byGroup)
    for (let i = 0; i < list.length; i += batchSize)
      jobs.push({ data: { events: list.slice(i, i + batchSize) }, group: { id: group } });
  return jobs;
}

/**
 * Takes up to `limit` of one destination host's jobs that wait in the queue (not running) out of
 * it, and says which events they carried: for a host that hangs, whose jobs would otherwise pile
 * up in front of every fetch (src/webhooks/host-circuits.ts). A job another worker is fetching
 * right now is skipped, not waited for; the caller gives the events back to the outbox in the
 * same transaction. Its filter is the fetch index's (pg-boss's job_i11): it reads the queued jobs,
 * not the finished ones kept for an hour.
 */
export async function takeQueuedJobsOf(
  db: Queryable,
  group: string,
  limit: number,
): Promise<WebhookJob["events"]> {
  const { rows } = await db.query<{ data: WebhookJob }>(
    `DELETE FROM pgboss.job j
      USING (SELECT id FROM pgboss.job
              WHERE name = $1 AND state < 'active' AND NOT blocked AND group_id = $2
              LIMIT $3
              FOR UPDATE SKIP LOCKED) queued
      WHERE j.name = $1 AND j.id = queued.id
     RETURNING j.data`,
    [WEBHOOK_QUEUE, group, limit],
  );
  return rows.flatMap((r) => r.data.events);
}
