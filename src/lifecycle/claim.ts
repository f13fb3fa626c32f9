import type { Queryable, Tx } from "../db/pool.ts";
import { HONOURS_OPT_OUT } from "./cancel.ts";
import { expireMessages } from "./expire.ts";

export { VALIDITY_EXPIRED } from "./expire.ts";

/**
 * Whether a row of `messages` (updated in the statement) is to a number on its account's opt-out
 * list, and honours it. A message that routes is written +263… or 263…: its number is "to"
 * without the +. One primary-key lookup of the list.
 */
const OPTED_OUT = `EXISTS (SELECT 1 FROM opt_outs o
                            WHERE o.account_id = messages.account_id AND o.number = ltrim(messages."to", '+')
                              AND ${HONOURS_OPT_OUT("messages", "o")})`;

export interface ClaimedMessage {
  id: string;
  to: string;
  body: string;
  sender_id: string;
  /** When the message was due: its send_at when scheduled, else received_at. Validity counts from it. */
  due_at: Date;
  /** Its own expiry (a validity_period, a delivery window), which then stands instead of due_at + validity. */
  expires_at: Date | null;
  /** Segments the carrier already accepted: never submitted again. */
  accepted_parts: number[];
  /** Earlier tries that put a segment on the wire and heard no answer (the carrier may have it). */
  unanswered: number;
  /** Earlier tries the carrier refused with a status that may pass (DISPATCH_MAX_REFUSALS). */
  refusals: number;
  /**
   * Its number is on its account's opt-out list and it honours the list: a send that raced the
   * opt-out (neither transaction saw the other's rows), never to be submitted.
   */
  opted_out: boolean;
}

/**
 * Takes a batch's messages for this worker, whatever the number of jobs they came in: those still
 * waiting and not held by another run. Messages past their validity period fail here and their
 * hold is released (the validity sweeper does the same for messages no worker claims). `busy`
 * are those another run holds (a job pg-boss delivered twice, or one whose worker died): not ours
 * to submit now, but not to be forgotten — the caller schedules them again. `notDue` are scheduled
 * messages whose send_at has not come (their job ran early: another process's clock, a retry):
 * never submitted before it, the caller schedules them again for their send_at.
 */
export async function claimMessages(
  tx: Tx,
  messageIds: readonly string[],
  options: { lockSeconds: number; validityHours: number; owner: string },
): Promise<{
  claimed: ClaimedMessage[];
  busy: string[];
  notDue: { id: string; sendAt: Date }[];
  /** The claim's time on the database's clock: no submit of it goes out before. */
  claimedAt: Date;
}> {
  await expireMessages(tx, { validityHours: options.validityHours, limit: messageIds.length, messageIds });
  // One statement: the claim, each claimed message's accepted segments, and the ids another run
  // holds. The outer SELECT reads the snapshot from before the UPDATE, so `busy` is every waiting
  // message the UPDATE did not take; one not yet due comes with its send_at. A cancelled message is
  // failed: neither claimed nor busy. NOT IN, not NOT EXISTS: it becomes one hashed lookup of the
  // claimed ids, where the generic plan ran NOT EXISTS as a nested loop over them for every row
  // (2 million comparisons for a batch of 2,000). When every id was claimed, as it mostly is, none
  // can be busy: a one-time filter skips that second look at the batch's messages.
  const { rows } = await tx.query<
    ClaimedMessage & { busy: boolean; not_before: Date | null; claimed_at: Date }
  >({
    name: "shiri_claim",
    text: `WITH claimed AS (
             UPDATE messages SET status = 'processing', attempts = attempts + 1, updated_at = now(),
                                 locked_until = now() + make_interval(secs => $2), locked_by = $3
              WHERE id = ANY($1::uuid[]) AND status IN ('enqueued', 'processing')
                AND (locked_until IS NULL OR locked_until < now())
                AND (send_at IS NULL OR send_at <= now())
             RETURNING id, "to", body, sender_id, COALESCE(send_at, received_at) AS due_at, expires_at,
                       unanswered, refusals,
                       ${OPTED_OUT} AS opted_out
           )
           SELECT c.*, false AS busy, NULL::timestamptz AS not_before, now() AS claimed_at,
                  COALESCE((SELECT array_agg(p.part_no::int) FROM message_parts p WHERE p.message_id = c.id),
                           '{}') AS accepted_parts
             FROM claimed c
           UNION ALL
           SELECT m.id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true, CASE WHEN m.send_at > now() THEN m.send_at END,
                  now(), NULL
             FROM messages m
            WHERE m.id = ANY($1::uuid[]) AND m.status IN ('enqueued', 'processing')
              AND m.id NOT IN (SELECT c.id FROM claimed c)
              AND (SELECT count(*) FROM claimed) < cardinality($1::uuid[])`,
    values: [messageIds, options.lockSeconds, options.owner],
  });
  const claimed: ClaimedMessage[] = [];
  const busy: string[] = [];
  const notDue: { id: string; sendAt: Date }[] = [];
  // With no row, nothing was claimed and nothing will be recorded against this time.
  const claimedAt = rows[0]?.claimed_at ?? new Date();
  for (const { busy: isBusy, not_before: notBefore, claimed_at: _at, ...message } of rows) {
    if (notBefore) notDue.push({ id: message.id, sendAt: notBefore });
    else if (isBusy) busy.push(message.id);
    else claimed.push(message);
  }
  return { claimed, busy, notDue, claimedAt };
}

/**
 * Keeps a batch's lease on its messages alive while it runs (a slow, TPS-limited carrier can take
 * longer than one lease): only the owner's, only while they wait for their outcome. Returns the ids
 * still leased to the owner (`kept`); any other of `messageIds` was taken by another run (or ended
 * by the validity sweeper) after the lease ran out, and is no longer this run's to submit. Of
 * those kept, `optedOut` are to a number that has since opted out (and honour the list): nothing
 * more of them may go.
 */
export async function extendLease(
  db: Queryable,
  messageIds: readonly string[],
  options: { lockSeconds: number; owner: string },
): Promise<{ kept: Set<string>; optedOut: Set<string> }> {
  const { rows } = await db.query<{ id: string; opted_out: boolean }>({
    name: "shiri_extend_lease",
    text: `UPDATE messages SET locked_until = now() + make_interval(secs => $2)
            WHERE id = ANY($1::uuid[]) AND locked_by = $3 AND status = 'processing'
           RETURNING id,
                     ${OPTED_OUT} AS opted_out`,
    values: [messageIds, options.lockSeconds, options.owner],
  });
  return {
    kept: new Set(rows.map((r) => r.id)),
    optedOut: new Set(rows.filter((r) => r.opted_out).map((r) => r.id)),
  };
}

/**
 * Gives back every message the owner (one batch) holds, for a batch that cannot know whether its
 * claim committed (the connection died with it): the messages are free for the jobs' next run
 * at once rather than when the unrenewed lease runs out. Only the owner's holds move.
 */
export async function releaseLease(
  db: Queryable,
  messageIds: readonly string[],
  owner: string,
): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE messages SET locked_until = NULL, locked_by = NULL
      WHERE id = ANY($1::uuid[]) AND locked_by = $2 AND status = 'processing'`,
    [messageIds, owner],
  );
  return rowCount ?? 0;
}
