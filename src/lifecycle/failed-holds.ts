import type { Queryable } from "../db/pool.ts";
import { capture, release } from "../ledger/ledger.ts";

/**
 * The holds of messages that have just failed. One the carrier took a segment of was sent: its
 * handset has that segment and the carrier bills it, so its hold is captured (a long message whose
 * other segments were refused or ran out of time). The others' holds are released. Once each, as
 * every capture and release is (src/ledger/ledger.ts).
 */
export async function settleFailedHolds(tx: Queryable, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  const { rows } = await tx.query<{ message_id: string }>(
    "SELECT DISTINCT message_id FROM message_parts WHERE message_id = ANY($1::uuid[])",
    [messageIds],
  );
  const sent = new Set(rows.map((r) => r.message_id));
  const unsent = messageIds.filter((id) => !sent.has(id));
  if (sent.size > 0) await capture(tx, [...sent]);
  if (unsent.length > 0) await release(tx, unsent);
}
