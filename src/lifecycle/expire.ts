import type { Queryable, Tx } from "../db/pool.ts";
import { recordMessageEvents } from "../events/events.ts";
import { settleFailedHolds } from "./failed-holds.ts";
import { openMark } from "./open-mark.ts";

/** Why a message that was never submitted in its validity period failed (not a carrier answer). */
export const VALIDITY_EXPIRED = "VALIDITY_EXPIRED";

/**
 * The same for a message whose send gave its own validity_period: the word an SMSC's receipt uses
 * for a message its own validity ran out on, which a client that asked for a validity looks for.
 */
export const EXPIRED = "EXPIRED";

/** Any constant works; it only has to be the same in every process. */
const EXPIRY_LOCK = 7_426_003;

export interface ExpiredMessage {
  id: string;
  operator: string;
}

/*
 * Waiting messages past their validity that no live run holds fail, with the operator response
 * that says why: those with an expires_at of their own (a validity_period of their send, or a
 * delivery window that delayed them) once it has passed, the others once their due time (send_at
 * for a scheduled message: it was not due before; else received_at) + the configured validity has.
 * Oldest first, skipping rows another transaction has locked (a claim in progress). Two
 * statements, as a prepared plan for "these ids" must not be shared with "any"; "any" starts at
 * the open-messages watermark (open-mark.ts): no waiting message was due before it, and none
 * expires before it is due (the API refuses a delivery window that opens after the expiry), so
 * each kind is one index range (messages_due_idx, messages_expires_idx). A message whose every
 * segment the carrier took (a late answer recorded the last) is not expired: its next claim sends
 * nothing and settles it a success.
 */
const WAITING = `status IN ('enqueued', 'processing') AND (locked_until IS NULL OR locked_until < now())
  AND (SELECT count(*) FROM message_parts p WHERE p.message_id = messages.id) < messages.segments`;
const PAST_VALIDITY = `expires_at IS NULL AND COALESCE(send_at, received_at) < now() - $1::float8 * interval '1 hour'`;
const expireFrom = (due: string) => `
  UPDATE messages m SET status = 'failed',
                        operator_response = CASE WHEN m.validity_period IS NOT NULL THEN '${EXPIRED}' ELSE $3 END,
                        last_error = 'not submitted within its validity period',
                        locked_until = NULL, updated_at = now()
    FROM (${due}) due
   WHERE m.id = due.id
  RETURNING m.id, m.operator`;
const EXPIRE_ANY = `
  WITH past_validity AS (
    SELECT id FROM messages
     WHERE COALESCE(send_at, received_at) >= $4 AND ${PAST_VALIDITY} AND ${WAITING}
     ORDER BY COALESCE(send_at, received_at) LIMIT $2
       FOR UPDATE SKIP LOCKED
  ), past_expiry AS (
    SELECT id FROM messages
     WHERE expires_at >= $4 AND expires_at < now() AND ${WAITING}
     ORDER BY expires_at LIMIT $2
       FOR UPDATE SKIP LOCKED
  )${expireFrom("SELECT id FROM past_validity UNION SELECT id FROM past_expiry")}`;
const EXPIRE_THESE = expireFrom(`
    SELECT id FROM messages
     WHERE id = ANY($4::uuid[]) AND ${WAITING} AND (expires_at < now() OR ${PAST_VALIDITY})
     ORDER BY COALESCE(send_at, received_at) LIMIT $2
       FOR UPDATE SKIP LOCKED`);

/**
 * Fails waiting messages past their expires_at, else their due time (send_at, else received_at) +
 * validity, releases their holds (captures them where the carrier took a segment) and records their
 * message.failed events, all in the caller's transaction; at most `limit` of each kind per call,
 * only among `messageIds` when given.
 */
export async function expireMessages(
  tx: Queryable,
  options: { validityHours: number; limit: number; messageIds?: readonly string[] },
): Promise<ExpiredMessage[]> {
  const values: unknown[] = [options.validityHours, options.limit, VALIDITY_EXPIRED];
  const { rows } = await tx.query<ExpiredMessage>(
    options.messageIds
      ? { name: "shiri_expire_these", text: EXPIRE_THESE, values: [...values, options.messageIds] }
      : { name: "shiri_expire_any", text: EXPIRE_ANY, values: [...values, await openMark(tx)] },
  );
  if (rows.length > 0) {
    const ids = rows.map((r) => r.id);
    await settleFailedHolds(tx, ids);
    await recordMessageEvents(tx, ids, "message.failed");
  }
  return rows;
}

/**
 * One sweeper pass: one process at a time across all of Shiri's (a transaction-scoped advisory
 * lock; a process that finds it taken does nothing this time). Returns null when another process
 * holds the lock.
 */
export async function sweepExpired(
  tx: Tx,
  options: { validityHours: number; limit: number },
): Promise<ExpiredMessage[] | null> {
  const { rows } = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
    EXPIRY_LOCK,
  ]);
  if (!rows[0]?.locked) return null;
  return expireMessages(tx, options);
}
