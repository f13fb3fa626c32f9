import type { Pool } from "../db/pool.ts";
import { WEBHOOK_QUEUE, WEBHOOK_QUEUE_OPTIONS } from "../queue/webhook-jobs.ts";

/**
 * An event handed to a job (by the relay, or born in one: src/events/event-jobs.ts) stays `pending` with
 * enqueued_at set until that job records it. If the job is lost (deleted, or it used up its own
 * retries because a worker kept dying or the recording kept failing), nothing would ever send the
 * event again. The sweeper finds such events — enqueued long enough ago that their job has
 * expired at least once, and carried by no job still waiting, retrying or running — and puts them
 * back in the outbox (enqueued_at NULL), where the relay picks them up with their attempt count
 * untouched.
 */
export const STRANDED_AFTER_SECONDS = WEBHOOK_QUEUE_OPTIONS.expireInSeconds + 120;

/**
 * pg-boss's job table (its default schema): read here, never written, to know which events a
 * live job still carries. pg-boss orders its state enum created < retry < active < completed.
 */
const REQUEUE_STRANDED = `
  WITH live AS (
    SELECT DISTINCT (ev->>'id')::uuid AS id
      FROM pgboss.job j, jsonb_array_elements(j.data->'events') ev
     WHERE j.name = $3 AND j.state < 'completed'
  ), stranded AS (
    SELECT e.id FROM webhook_events e
     WHERE e.state = 'pending' AND e.enqueued_at < now() - make_interval(secs => $1)
       AND NOT EXISTS (SELECT 1 FROM live WHERE live.id = e.id)
     ORDER BY e.enqueued_at
     LIMIT $2
     FOR UPDATE SKIP LOCKED
  )
  UPDATE webhook_events e SET enqueued_at = NULL, next_attempt_at = LEAST(e.next_attempt_at, now())
    FROM stranded WHERE e.id = stranded.id
  RETURNING e.id`;

/** One bounded, set-based pass; returns how many events went back to the outbox. */
export async function requeueStrandedEvents(
  pool: Pool,
  opts: { olderThanSeconds?: number; limit: number },
): Promise<number> {
  const { rowCount } = await pool.query(REQUEUE_STRANDED, [
    opts.olderThanSeconds ?? STRANDED_AFTER_SECONDS,
    opts.limit,
    WEBHOOK_QUEUE,
  ]);
  return rowCount ?? 0;
}
