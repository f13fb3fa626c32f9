import type { Queryable, Tx } from "../db/pool.ts";
import { expireMessages } from "./expire.ts";

export { VALIDITY_EXPIRED } from "./expire.ts";

export interface ClaimedMessage {
  id: string;
  to: string;
  body: string;
  sender_id: string;
  received_at: Date;
  /** Segments the carrier already accepted: never submitted again. */
  accepted_parts: number[];
}

/**
 * Takes a batch's messages for this worker, whatever the number of jobs they came in: those still
 * waiting and not held by another run. Messages past their validity period fail here and their
 * hold is released (the validity sweeper does the same for messages no worker claims). `busy`
 * are those another run holds (a job pg-boss delivered twice, or one whose worker died): not ours
 * to submit now, but not to be forgotten — the caller schedules them again.
 */
export async function claimMessages(
  tx: Tx,
  messageIds: readonly string[],
  options: { lockSeconds: number; validityHours: number; owner: string },
): Promise<{ claimed: ClaimedMessage[]; busy: string[] }> {
  await expireMessages(tx, { validityHours: options.validityHours, limit: messageIds.length, messageIds });
  // One statement: the claim, each claimed message's accepted segments, and the ids another run
  // holds. The outer SELECT reads the snapshot from before the UPDATE, so `busy` is every waiting
  // message the UPDATE did not take.
  const { rows } = await tx.query<ClaimedMessage & { busy: boolean }>({
    name: "shiri_claim",
    text: `WITH claimed AS (
             UPDATE messages SET status = 'processing', attempts = attempts + 1, updated_at = now(),
                                 locked_until = now() + make_interval(secs => $2), locked_by = $3
              WHERE id = ANY($1::uuid[]) AND status IN ('enqueued', 'processing')
                AND (locked_until IS NULL OR locked_until < now())
             RETURNING id, "to", body, sender_id, received_at
           )
           SELECT c.*, false AS busy,
                  COALESCE((SELECT array_agg(p.part_no::int) FROM message_parts p WHERE p.message_id = c.id),
                           '{}') AS accepted_parts
             FROM claimed c
           UNION ALL
           SELECT m.id, NULL, NULL, NULL, NULL, true, NULL
             FROM messages m
            WHERE m.id = ANY($1::uuid[]) AND m.status IN ('enqueued', 'processing')
              AND NOT EXISTS (SELECT 1 FROM claimed c WHERE c.id = m.id)`,
    values: [messageIds, options.lockSeconds, options.owner],
  });
  const claimed: ClaimedMessage[] = [];
  const busy: string[] = [];
  for (const { busy: isBusy, ...message } of rows) {
    if (isBusy) busy.push(message.id);
    else claimed.push(message);
  }
  return { claimed, busy };
}

/**
 * Keeps a batch's lease on its messages alive while it runs (a slow, TPS-limited carrier can take
 * longer than one lease): only the owner's, only while they wait for their outcome.
 */
export async function extendLease(
  db: Queryable,
  messageIds: readonly string[],
  options: { lockSeconds: number; owner: string },
): Promise<number> {
  const { rowCount } = await db.query({
    name: "shiri_extend_lease",
    text: `UPDATE messages SET locked_until = now() + make_interval(secs => $2)
            WHERE id = ANY($1::uuid[]) AND locked_by = $3 AND status = 'processing'`,
    values: [messageIds, options.lockSeconds, options.owner],
  });
  return rowCount ?? 0;
}
