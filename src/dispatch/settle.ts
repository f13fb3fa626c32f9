import type { PgBoss } from "pg-boss";
import type { Operator } from "../../carriers/index.ts";
import type { Tx } from "../db/pool.ts";
import { capture, release } from "../ledger/ledger.ts";
import { dispatchQueue, enqueueDispatch, inTransaction } from "../queue/boss.ts";
import { refreshDelivery } from "../receipts/apply-receipts.ts";
import { recordMessageEvents } from "../webhooks/events.ts";

export interface DispatchOutcome {
  /** Segments the carrier accepted in this run, with their canonical SMSC ids. */
  acceptedParts: { messageId: string; partNo: number; smscId: string }[];
  /** Messages whose every segment is now accepted. */
  succeeded: { id: string; response: string }[];
  /** Messages the carrier refused for good. */
  failed: { id: string; response: string; error: string }[];
  /** Messages to try again later (throttled, timed out, connection lost, breaker open). */
  retry: { id: string; error: string }[];
  /** Messages another run holds: looked at again once its hold has run out. */
  deferred: string[];
}

/** Back-off before a message's next attempt: 1, 2, 4 … 60 s, with jitter so retries spread out. */
export function retryDelaySeconds(attempts: number): number {
  const base = Math.min(60, 2 ** Math.max(0, attempts - 1));
  return Math.ceil(base / 2 + (Math.random() * base) / 2);
}

/**
 * Records one run of a dispatch job in one transaction: the accepted segments, each message's
 * new status with its money move (capture on success, release on failure, exactly once), the
 * retries as new delayed jobs, and the job's own completion — so a crash anywhere either
 * keeps all of it or none, and the job then runs again from what was recorded.
 */
export async function settleDispatch(
  tx: Tx,
  boss: PgBoss,
  operator: Operator,
  job: { id: string },
  outcome: DispatchOutcome,
  opts: { batchSize: number; lockSeconds: number },
): Promise<void> {
  const parts = outcome.acceptedParts;
  if (parts.length > 0) {
    await tx.query(
      `INSERT INTO message_parts (message_id, part_no, operator, smsc_id)
       SELECT m, p, $1, s FROM unnest($2::uuid[], $3::int[], $4::text[]) AS u(m, p, s)
       ON CONFLICT (message_id, part_no) DO NOTHING`,
      [operator, parts.map((p) => p.messageId), parts.map((p) => p.partNo), parts.map((p) => p.smscId)],
    );
  }

  if (outcome.succeeded.length > 0) {
    const { rows } = await tx.query<{ id: string }>(
      `UPDATE messages m SET status = 'success', operator_response = u.response, accepted_at = now(),
                             locked_until = NULL, last_error = NULL, updated_at = now()
         FROM unnest($1::uuid[], $2::text[]) AS u(id, response)
        WHERE m.id = u.id AND m.status = 'processing'
       RETURNING m.id`,
      [outcome.succeeded.map((s) => s.id), outcome.succeeded.map((s) => s.response)],
    );
    const ids = rows.map((r) => r.id);
    await capture(tx, ids);
    await recordMessageEvents(tx, ids, "message.success");
    // Receipts of earlier-accepted segments may already be here (multi-part messages).
    await refreshDelivery(tx, ids);
  }

  if (outcome.failed.length > 0) {
    const { rows } = await tx.query<{ id: string }>(
      `UPDATE messages m SET status = 'failed', operator_response = u.response, last_error = u.error,
                             locked_until = NULL, updated_at = now()
         FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(id, response, error)
        WHERE m.id = u.id AND m.status = 'processing'
       RETURNING m.id`,
      [
        outcome.failed.map((f) => f.id),
        outcome.failed.map((f) => f.response),
        outcome.failed.map((f) => f.error),
      ],
    );
    const ids = rows.map((r) => r.id);
    await release(tx, ids);
    await recordMessageEvents(tx, ids, "message.failed");
  }

  if (outcome.retry.length > 0) {
    const { rows } = await tx.query<{ id: string; attempts: number }>(
      `UPDATE messages m SET locked_until = NULL, last_error = u.error, updated_at = now()
         FROM unnest($1::uuid[], $2::text[]) AS u(id, error)
        WHERE m.id = u.id AND m.status = 'processing'
       RETURNING m.id, m.attempts`,
      [outcome.retry.map((r) => r.id), outcome.retry.map((r) => r.error)],
    );
    const byDelay = new Map<number, { id: string; operator: Operator }[]>();
    for (const r of rows) {
      const delay = retryDelaySeconds(r.attempts);
      byDelay.set(delay, [...(byDelay.get(delay) ?? []), { id: r.id, operator }]);
    }
    for (const [delay, messages] of byDelay) await enqueueDispatch(boss, tx, messages, opts.batchSize, delay);
  }

  if (outcome.deferred.length > 0) {
    const messages = outcome.deferred.map((id) => ({ id, operator }));
    await enqueueDispatch(boss, tx, messages, opts.batchSize, opts.lockSeconds);
  }

  await boss.complete(dispatchQueue(operator), job.id, null, { db: inTransaction(tx) });
}
