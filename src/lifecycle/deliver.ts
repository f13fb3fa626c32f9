import type { Queryable } from "../db/pool.ts";
import { FINAL_STATES } from "../domain/receipt-states.ts";
import { recordMessageEvents } from "../events/events.ts";

const FINAL = [...FINAL_STATES];

/** A message delivered: its operator and the seconds from its acceptance to its delivery. */
export interface Delivery {
  operator: string;
  seconds: number;
}

/**
 * Carries segment receipts up to their messages: delivered when every segment is DELIVRD
 * (sets delivered_at), else a final non-delivered state is reported in operator_response: the
 * earliest applied, and of segments whose receipts were applied together (one transaction, one
 * receipt_at) the lowest part. The order is total, so looking again (a duplicate receipt, a
 * second refresh) picks the same state and records no second event, whatever plan reads the rows.
 * Only accepted (`success`) messages move; status itself never changes here.
 */
export async function refreshDelivery(tx: Queryable, messageIds: readonly string[]): Promise<Delivery[]> {
  if (messageIds.length === 0) return [];
  const delivered = await tx.query<{ id: string; operator: string; seconds: number }>(
    `UPDATE messages m SET delivered_at = now(), operator_response = 'DELIVRD', updated_at = now()
      WHERE m.id = ANY($1::uuid[]) AND m.status = 'success' AND m.delivered_at IS NULL
        AND (SELECT count(*) FILTER (WHERE p.receipt_state = 'DELIVRD') FROM message_parts p
              WHERE p.message_id = m.id) = m.segments
     RETURNING m.id, m.operator, extract(epoch FROM m.delivered_at - m.accepted_at)::float8 AS seconds`,
    [messageIds],
  );
  const undelivered = await tx.query<{ id: string }>(
    `UPDATE messages m SET operator_response = f.state, updated_at = now()
       FROM (SELECT DISTINCT ON (p.message_id) p.message_id,
                    p.receipt_state || coalesce(' err:' || p.receipt_err, '') AS state
               FROM message_parts p
              WHERE p.message_id = ANY($1::uuid[]) AND p.receipt_state = ANY($2::text[])
                AND p.receipt_state <> 'DELIVRD'
              ORDER BY p.message_id, p.receipt_at, p.part_no) f
      WHERE m.id = ANY($1::uuid[]) AND m.id = f.message_id AND m.status = 'success' AND m.delivered_at IS NULL
        AND m.operator_response IS DISTINCT FROM f.state
     RETURNING m.id`,
    [messageIds, FINAL],
  );
  if (delivered.rows.length > 0) {
    await recordMessageEvents(
      tx,
      delivered.rows.map((r) => r.id),
      "message.delivered",
    );
  }
  if (undelivered.rows.length > 0) {
    await recordMessageEvents(
      tx,
      undelivered.rows.map((r) => r.id),
      "message.undelivered",
    );
  }
  return delivered.rows.map((r) => ({ operator: r.operator, seconds: r.seconds }));
}

/** Of these messages, those not yet accepted by a carrier (`enqueued` or `processing`). */
export async function stillBeingAccepted(tx: Queryable, messageIds: readonly string[]): Promise<string[]> {
  if (messageIds.length === 0) return [];
  const { rows } = await tx.query<{ id: string }>(
    "SELECT id FROM messages WHERE id = ANY($1::uuid[]) AND status IN ('enqueued', 'processing')",
    [messageIds],
  );
  return rows.map((r) => r.id);
}
