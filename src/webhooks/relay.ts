import { type Pool, withTransaction } from "../db/pool.ts";
import { type DueState, type Queue, statementsOn } from "../queue/boss.ts";
import { OUTBOX_TOPIC } from "../queue/wakeups.ts";
import { WEBHOOK_QUEUE, webhookJobs } from "../queue/webhook-jobs.ts";

/**
 * Moves due events from the outbox into pg-boss: claims up to `limit` events that no job carries
 * yet (first attempts, due retries and events handed back alike), groups them by destination
 * host in batches, and inserts one job per batch, in one transaction, so an event is never
 * enqueued twice nor lost. The worker's status changes put their own events in jobs as they record
 * them (src/events/event-jobs.ts); the relay takes the rest: the API's events (its send path stays one
 * statement shorter), retries come due and events handed back.
 */
const CLAIM_DUE = `
  UPDATE webhook_events e SET enqueued_at = now()
    FROM (SELECT id FROM webhook_events
           WHERE enqueued_at IS NULL AND next_attempt_at <= now()
           ORDER BY next_attempt_at
           LIMIT $1
           FOR UPDATE SKIP LOCKED) due
   WHERE e.id = due.id
  RETURNING e.id, e.url, e.attempts, e.next_attempt_at`;

export async function relayDueEvents(
  pool: Pool,
  boss: Queue,
  opts: { limit: number; batchSize: number },
): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: string; url: string; attempts: number; next_attempt_at: Date }>({
      // Named: the due index's order and the LIMIT fix its plan (see send-batch.ts's record).
      name: "shiri_relay_due",
      text: CLAIM_DUE,
      values: [opts.limit],
    });
    if (rows.length === 0) return 0;
    rows.sort((a, b) => a.next_attempt_at.getTime() - b.next_attempt_at.getTime());
    const events = rows.map((r) => ({ id: r.id, url: r.url, attempt: r.attempts }));
    await boss.insert(WEBHOOK_QUEUE, webhookJobs(events, opts.batchSize), { db: statementsOn(tx) });
    return rows.length;
  });
}

/**
 * The outbox as it stands, for the due watch (src/queue/due-watch.ts): whether events wait for
 * the relay now, and in how many ms the next one not yet due comes due (both, as the relay may
 * take the due ones and then sleep through the next). Each half is one probe of the due index.
 */
export async function outboxDue(pool: Pool): Promise<DueState[]> {
  const { rows } = await pool.query<{ due_now: boolean; next_ms: number | null }>({
    name: "shiri_outbox_due",
    text: `SELECT EXISTS (SELECT 1 FROM webhook_events
                           WHERE enqueued_at IS NULL AND next_attempt_at <= now()) AS due_now,
                  (extract(epoch FROM (SELECT min(next_attempt_at) FROM webhook_events
                                        WHERE enqueued_at IS NULL AND next_attempt_at > now()) - now())
                   * 1000)::float8 AS next_ms`,
  });
  const row = rows[0];
  if (!row || (!row.due_now && row.next_ms === null)) return [];
  return [{ topic: OUTBOX_TOPIC, dueNow: row.due_now, nextDueMs: row.next_ms }];
}
