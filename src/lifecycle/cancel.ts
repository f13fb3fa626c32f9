import type { Queryable } from "../db/pool.ts";
import { writtenForms } from "../domain/numbers.ts";
import { recordMessageEvents } from "../events/events.ts";
import { release } from "../ledger/ledger.ts";
import { settleFailedHolds } from "./failed-holds.ts";

/** The operator response of a message its sender cancelled before it was dispatched. */
export const CANCELLED = "CANCELLED";

/*
 * A message waiting for a try: enqueued, or processing between tries (no run holds its lease: a
 * carrier down or throttling, a transient refusal). A claim takes it under the same row lock, and
 * the lock's wait reads the row again, so whichever commits first wins — a claimed message is
 * never cancelled and a cancelled one is never claimed (the claim takes enqueued or processing
 * only). A lapsed lease is not waiting: its run may still be submitting. Nor is one kept, with no
 * run, while a late answer may come (src/lifecycle/outcomes.ts giveUpLease).
 */
const BETWEEN_TRIES =
  "status = 'processing' AND locked_by IS NULL AND (locked_until IS NULL OR locked_until < now())";
/* One the carrier has nothing of: no segment it took, no submit left unanswered. */
const REACHED_NOBODY = `NOT maybe_at_carrier
  AND NOT EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = messages.id)`;

/*
 * A waiting message the carrier has nothing of → failed CANCELLED. Rows are locked in id order so
 * that two cancels of overlapping sets never deadlock.
 */
const cancelWhere = (narrow: string) => `
  UPDATE messages m SET status = 'failed', operator_response = $2,
                        last_error = 'cancelled by the sender before dispatch', updated_at = now()
    FROM (SELECT id FROM messages
           WHERE ${narrow} AND account_id = $1
             AND (status = 'enqueued' OR (${BETWEEN_TRIES} AND ${REACHED_NOBODY}))
           ORDER BY id
           FOR UPDATE) waiting
   WHERE m.id = waiting.id
  RETURNING m.id, m.operator`;
const CANCEL_MESSAGE = cancelWhere("id = $3");
const CANCEL_BULK = cancelWhere("bulk_id = $3");

export interface CancelledMessage {
  id: string;
  operator: string;
}

/**
 * Cancels the account's waiting messages — one message, or every one of a bulk send that is
 * not yet dispatched — in the caller's transaction: each fails with CANCELLED, its hold is
 * released (once: the ledger refuses a second release) and its message.failed event recorded.
 * Returns the messages this call cancelled; those already dispatched or final are left as they are.
 */
export async function cancelMessages(
  tx: Queryable,
  accountId: string,
  target: { messageId: string } | { bulkId: string },
): Promise<CancelledMessage[]> {
  const { rows } = await tx.query<CancelledMessage>(
    "messageId" in target
      ? {
          name: "shiri_cancel_message",
          text: CANCEL_MESSAGE,
          values: [accountId, CANCELLED, target.messageId],
        }
      : { name: "shiri_cancel_bulk", text: CANCEL_BULK, values: [accountId, CANCELLED, target.bulkId] },
  );
  if (rows.length > 0) {
    const ids = rows.map((r) => r.id);
    await release(tx, ids);
    await recordMessageEvents(tx, ids, "message.failed");
  }
  return rows;
}

/** The operator response of a message its number opted out of before it was dispatched. */
export const OPTED_OUT_BEFORE_DISPATCH = "OPTED_OUT";

/*
 * A waiting message → failed OPTED_OUT, for the messages of an account to numbers that have just
 * opted out: the same guard and lock order as a cancel (a claimed message is left to its run). One
 * between tries is not sent again, even when the carrier may have a part of it.
 */
const OPT_OUT_WAITING = `
  UPDATE messages m SET status = 'failed', operator_response = $2,
                        last_error = 'the number opted out before dispatch', updated_at = now()
    FROM (SELECT id FROM messages
           WHERE account_id = $1 AND "to" = ANY ($3::text[]) AND (status = 'enqueued' OR ${BETWEEN_TRIES})
           ORDER BY id
           FOR UPDATE) waiting
   WHERE m.id = waiting.id
  RETURNING m.id, m.operator`;

/**
 * Fails the account's messages still waiting (queued, or scheduled for later) to numbers that
 * have just opted out (given in international form), in the caller's transaction: each fails with
 * OPTED_OUT, its hold is released (captured where the carrier took a segment of it) and its
 * message.failed event recorded. A message already claimed by dispatch is on its way and is left
 * as it is.
 */
export async function failOptedOutMessages(
  tx: Queryable,
  accountId: string,
  numbers: readonly string[],
): Promise<CancelledMessage[]> {
  if (numbers.length === 0) return [];
  const { rows } = await tx.query<CancelledMessage>(OPT_OUT_WAITING, [
    accountId,
    OPTED_OUT_BEFORE_DISPATCH,
    numbers.flatMap(writtenForms),
  ]);
  if (rows.length > 0) {
    const ids = rows.map((r) => r.id);
    await settleFailedHolds(tx, ids);
    await recordMessageEvents(tx, ids, "message.failed");
  }
  return rows;
}

/**
 * Whether message `m` honours opt-out `o` of its number: unless it ignores the list (a STOP's
 * confirmation). A message a version before migration 042 wrote (null) is judged as that version
 * judged it: by whether the number opted out after the message was made.
 */
export const HONOURS_OPT_OUT = (m: string, o: string) =>
  `(${m}.ignores_opt_outs = false OR (${m}.ignores_opt_outs IS NULL AND ${o}.created_at > ${m}.created_at))`;

/**
 * Of messages a run is about to give back for another try, those whose number is on their
 * account's list and that honour it: opted out while a worker was handing the message to the
 * carrier (the opt-out's own sweep could not take it). They must not be tried again. The
 * confirmation of a STOP ignores the list, and goes.
 */
export async function optedOutAmong(
  tx: Queryable,
  items: readonly { id: string; number: string }[],
): Promise<string[]> {
  if (items.length === 0) return [];
  const { rows } = await tx.query<{ id: string }>(
    `SELECT u.id FROM unnest($1::uuid[], $2::text[]) AS u(id, number)
      WHERE EXISTS (SELECT 1 FROM messages m JOIN opt_outs o ON o.account_id = m.account_id
                     WHERE m.id = u.id AND o.number = u.number AND ${HONOURS_OPT_OUT("m", "o")})`,
    [items.map((i) => i.id), items.map((i) => i.number)],
  );
  return rows.map((r) => r.id);
}
