/**
 * The pg-boss queue of callback deliveries: one job per attempt of one event, grouped by
 * destination host so that pg-boss bounds the requests in flight per host across every worker.
 */
export const WEBHOOK_QUEUE = "webhook-delivery";

export interface WebhookJob {
  eventId: string;
  /** The attempt this job is for; a job whose event has moved on is a stale duplicate. */
  attempt: number;
}

export const WEBHOOK_QUEUE_OPTIONS = {
  // Retries of events are scheduled by the outbox (retry.ts); a job retry only covers a worker
  // that died mid-attempt, once its job expires.
  retryLimit: 10,
  retryDelay: 30,
  expireInSeconds: 120,
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
