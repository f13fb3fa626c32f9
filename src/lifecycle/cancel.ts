import type { Queryable } from "../db/pool.ts";
import { release } from "../ledger/ledger.ts";
import { recordMessageEvents } from "../webhooks/events.ts";

/** The operator response of a message its sender cancelled before it was dispatched. */
export const CANCELLED = "CANCELLED";

/*
 * enqueued → failed CANCELLED. Only a message still waiting moves: a claim takes it to
 * processing under the same row lock, so whichever commits first wins — a claimed message is
 * never cancelled and a cancelled one is never claimed (the claim takes enqueued or processing
 * only). Rows are locked in id order so that two cancels of overlapping sets never deadlock.
 */
const cancelWhere = (narrow: string) => `
  UPDATE messages m SET status = 'failed', operator_response = $2,
                        last_error = 'cancelled by the sender before dispatch', updated_at = now()
    FROM (SELECT id FROM messages
           WHERE ${narrow} AND account_id = $1 AND status = 'enqueued'
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
