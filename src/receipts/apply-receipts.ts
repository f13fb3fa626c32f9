import type { Operator } from "../../carriers/index.ts";
import type { Queryable } from "../db/pool.ts";
import { recordMessageEvents } from "../webhooks/events.ts";
import { FINAL_STATES, type Receipt } from "./read-receipt.ts";

const FINAL = [...FINAL_STATES];

export interface ApplyResult {
  /** Receipts that matched a recorded segment. */
  matched: number;
  /** Receipts kept aside because no segment had that id yet. */
  early: number;
  /** Seconds from acceptance to delivery of each message this batch delivered. */
  delivered: number[];
}

/**
 * Applies a batch of one operator's receipts in set-based statements. A segment's state only
 * moves forward (a final state is kept, except that DELIVRD wins), so duplicates change
 * nothing. A receipt that matches no segment is kept in early_receipts: its submit_sm_resp
 * may not be recorded yet.
 */
export async function applyReceipts(
  tx: Queryable,
  operator: Operator,
  receipts: readonly Receipt[],
): Promise<ApplyResult> {
  if (receipts.length === 0) return { matched: 0, early: 0, delivered: [] };
  const ids = receipts.map((r) => r.smscId);
  const states = receipts.map((r) => r.state);
  const { rows } = await tx.query<{
    message_id: string | null;
    smsc_id: string;
    state: string;
    known: boolean;
  }>(
    `WITH r AS (SELECT DISTINCT * FROM unnest($2::text[], $3::text[]) AS r(smsc_id, state)),
     updated AS (
       UPDATE message_parts p SET receipt_state = r.state, receipt_at = now()
         FROM r
        WHERE p.operator = $1 AND p.smsc_id = r.smsc_id
          AND p.receipt_state IS DISTINCT FROM r.state
          AND (p.receipt_state IS NULL OR NOT (p.receipt_state = ANY($4::text[])) OR r.state = 'DELIVRD')
       RETURNING p.message_id
     )
     SELECT DISTINCT u.message_id, NULL AS smsc_id, NULL AS state, true AS known FROM updated u
     UNION ALL
     SELECT NULL, r.smsc_id, r.state,
            EXISTS (SELECT 1 FROM message_parts p WHERE p.operator = $1 AND p.smsc_id = r.smsc_id)
       FROM r`,
    [operator, ids, states, FINAL],
  );
  const touched = rows.flatMap((r) => (r.message_id ? [r.message_id] : []));
  const unknown = rows.filter((r) => r.smsc_id !== null && !r.known);
  if (unknown.length > 0) {
    await tx.query(
      `INSERT INTO early_receipts (operator, smsc_id, state)
       SELECT $1::text, * FROM unnest($2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
      [operator, unknown.map((r) => r.smsc_id), unknown.map((r) => r.state)],
    );
  }
  const delivered = await refreshDelivery(tx, touched);
  return { matched: receipts.length - unknown.length, early: unknown.length, delivered };
}

/**
 * Carries segment receipts up to their messages: delivered when every segment is DELIVRD
 * (sets delivered_at), else a final non-delivered state is reported in operator_response.
 * Only accepted (`success`) messages move; status itself never changes here.
 */
export async function refreshDelivery(tx: Queryable, messageIds: readonly string[]): Promise<number[]> {
  if (messageIds.length === 0) return [];
  const delivered = await tx.query<{ id: string; seconds: number }>(
    `UPDATE messages m SET delivered_at = now(), operator_response = 'DELIVRD', updated_at = now()
      WHERE m.id = ANY($1::uuid[]) AND m.status = 'success' AND m.delivered_at IS NULL
        AND (SELECT count(*) FILTER (WHERE p.receipt_state = 'DELIVRD') FROM message_parts p
              WHERE p.message_id = m.id) = m.segments
     RETURNING m.id, extract(epoch FROM m.delivered_at - m.accepted_at)::float8 AS seconds`,
    [messageIds],
  );
  const undelivered = await tx.query<{ id: string }>(
    `UPDATE messages m SET operator_response = f.state, updated_at = now()
       FROM (SELECT DISTINCT ON (p.message_id) p.message_id, p.receipt_state AS state
               FROM message_parts p
              WHERE p.message_id = ANY($1::uuid[]) AND p.receipt_state = ANY($2::text[])
                AND p.receipt_state <> 'DELIVRD'
              ORDER BY p.message_id, p.receipt_at) f
      WHERE m.id = f.message_id AND m.status = 'success' AND m.delivered_at IS NULL
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
  return delivered.rows.map((r) => r.seconds);
}

/**
 * Applies the early receipts for these SMSC ids, whose segments have just been recorded.
 * Returns the delivery latencies of the messages this delivered.
 */
export async function applyEarlyReceipts(
  tx: Queryable,
  operator: Operator,
  smscIds: readonly string[],
): Promise<number[]> {
  if (smscIds.length === 0) return [];
  const early = await tx.query<{ smsc_id: string; state: string }>(
    "DELETE FROM early_receipts WHERE operator = $1 AND smsc_id = ANY($2::text[]) RETURNING smsc_id, state",
    [operator, smscIds],
  );
  if (early.rows.length === 0) return [];
  const applied = await applyReceipts(
    tx,
    operator,
    early.rows.map((r) => ({ smscId: r.smsc_id, state: r.state })),
  );
  return applied.delivered;
}

/**
 * Applies early receipts whose segment has since been recorded, and drops those that stayed
 * unmatched past the grace period. Returns how many were dropped as unknown.
 */
export async function sweepEarlyReceipts(
  tx: Queryable,
  graceSeconds: number,
): Promise<{ applied: number; unknown: { operator: string; smsc_id: string; state: string }[] }> {
  const matched = await tx.query<{ operator: Operator; smsc_id: string; state: string }>(
    `DELETE FROM early_receipts e
      WHERE EXISTS (SELECT 1 FROM message_parts p WHERE p.operator = e.operator AND p.smsc_id = e.smsc_id)
     RETURNING e.operator, e.smsc_id, e.state`,
  );
  const byOperator = new Map<Operator, Receipt[]>();
  for (const r of matched.rows) {
    const list = byOperator.get(r.operator) ?? [];
    list.push({ smscId: r.smsc_id, state: r.state });
    byOperator.set(r.operator, list);
  }
  for (const [operator, list] of byOperator) await applyReceipts(tx, operator, list);
  const stale = await tx.query<{ operator: string; smsc_id: string; state: string }>(
    `DELETE FROM early_receipts WHERE received_at < now() - make_interval(secs => $1)
     RETURNING operator, smsc_id, state`,
    [graceSeconds],
  );
  return { applied: matched.rows.length, unknown: stale.rows };
}
