import type { Tx } from "../db/pool.ts";
import { release } from "../ledger/ledger.ts";
import { recordMessageEvents } from "../webhooks/events.ts";

/** Why a message that was never submitted in its validity period failed (not a carrier answer). */
export const VALIDITY_EXPIRED = "VALIDITY_EXPIRED";

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
 * Takes the job's messages for this worker: those still waiting and not held by another run
 * of the same job. Messages past their validity period fail here and their hold is released.
 */
export async function claimMessages(
  tx: Tx,
  messageIds: readonly string[],
  opts: { lockSeconds: number; validityHours: number },
): Promise<{ claimed: ClaimedMessage[]; busy: string[] }> {
  const expired = await tx.query<{ id: string }>(
    `UPDATE messages SET status = 'failed', operator_response = $3, last_error = 'not submitted within its validity period',
                         locked_until = NULL, updated_at = now()
      WHERE id = ANY($1::uuid[]) AND status IN ('enqueued', 'processing')
        AND (locked_until IS NULL OR locked_until < now())
        AND received_at < now() - make_interval(hours => $2)
     RETURNING id`,
    [messageIds, opts.validityHours, VALIDITY_EXPIRED],
  );
  if (expired.rows.length > 0) {
    const ids = expired.rows.map((r) => r.id);
    await release(tx, ids);
    await recordMessageEvents(tx, ids, "message.failed");
  }
  const { rows } = await tx.query<ClaimedMessage>(
    `WITH claimed AS (
       UPDATE messages SET status = 'processing', attempts = attempts + 1, updated_at = now(),
                           locked_until = now() + make_interval(secs => $2)
        WHERE id = ANY($1::uuid[]) AND status IN ('enqueued', 'processing')
          AND (locked_until IS NULL OR locked_until < now())
       RETURNING id, "to", body, sender_id, received_at
     )
     SELECT c.*, COALESCE((SELECT array_agg(p.part_no::int) FROM message_parts p WHERE p.message_id = c.id), '{}')
              AS accepted_parts
       FROM claimed c`,
    [messageIds, opts.lockSeconds],
  );
  // Held by another run (a job pg-boss delivered twice, or one whose worker died): not ours to
  // submit now, but not to be forgotten either — the caller schedules them again.
  const claimedIds = rows.map((r) => r.id);
  const busy = await tx.query<{ id: string }>(
    `SELECT id FROM messages
      WHERE id = ANY($1::uuid[]) AND status IN ('enqueued', 'processing') AND NOT (id = ANY($2::uuid[]))`,
    [messageIds, claimedIds],
  );
  return { claimed: rows, busy: busy.rows.map((r) => r.id) };
}
