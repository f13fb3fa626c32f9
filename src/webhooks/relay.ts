import type { PgBoss } from "pg-boss";
import { type Pool, withTransaction } from "../db/pool.ts";
import { destinationGroup, WEBHOOK_QUEUE, type WebhookJob } from "./queue.ts";

/**
 * Moves due events from the outbox into pg-boss: claims up to `limit` events that no job carries
 * yet (first attempts and due retries alike) and inserts one job each, in one transaction, so an
 * event is never enqueued twice nor lost. The outbox is written by the status change's own
 * transaction, which has no queue handle; this relay is what keeps that write one cheap INSERT.
 */
const CLAIM_DUE = `
  UPDATE webhook_events e SET enqueued_at = now()
    FROM (SELECT id FROM webhook_events
           WHERE enqueued_at IS NULL AND next_attempt_at <= now()
           ORDER BY next_attempt_at
           LIMIT $1
           FOR UPDATE SKIP LOCKED) due
   WHERE e.id = due.id
  RETURNING e.id, e.url, e.attempts`;

export async function relayDueEvents(pool: Pool, boss: PgBoss, limit: number): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: string; url: string; attempts: number }>(CLAIM_DUE, [limit]);
    if (rows.length === 0) return 0;
    const jobs = rows.map((r) => ({
      data: { eventId: r.id, attempt: r.attempts } satisfies WebhookJob,
      group: { id: destinationGroup(r.url) },
    }));
    await boss.insert(WEBHOOK_QUEUE, jobs, {
      db: { executeSql: (text: string, values?: unknown[]) => tx.query(text, values) },
    });
    return rows.length;
  });
}
