import type { Queryable } from "../db/pool.ts";

/*
 * Deleters for the message side of retention, each one bounded chunk in the caller's transaction,
 * oldest first along an index, skipping rows another transaction holds (SKIP LOCKED): a chunk
 * never waits on the send, dispatch or receipt paths, and they never wait on it for more than
 * one short transaction. Each returns how many rows of its main table it deleted.
 */

/*
 * Only final messages (success or failed) whose charge is no longer held: a message that still
 * holds money is never deleted, whatever its age. Nor is one the carrier took and may still
 * deliver: until an hour past the validity its send gave (up to three days, which may outlast a
 * short window), its receipt may come. Its parts go in the same statement; its ledger rows stay
 * (no table has a foreign key to messages).
 */
const DELETE_MESSAGES = `
  WITH doomed AS (
    SELECT id FROM messages
     WHERE COALESCE(send_at, received_at) < now() - make_interval(days => $1)
       AND status IN ('success', 'failed') AND billing <> 'held'
       AND NOT (status = 'success' AND delivered_at IS NULL AND expires_at IS NOT NULL
                AND expires_at > now() - interval '1 hour')
     ORDER BY COALESCE(send_at, received_at) LIMIT $2
     FOR UPDATE SKIP LOCKED
  ), parts AS (
    DELETE FROM message_parts p USING doomed WHERE p.message_id = doomed.id
  )
  DELETE FROM messages m USING doomed WHERE m.id = doomed.id`;

export async function deleteOldMessages(db: Queryable, days: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(DELETE_MESSAGES, [days, limit]);
  return rowCount ?? 0;
}

/** A bulk send goes once it is past the window and none of its messages is left. */
export async function deleteEmptyBulkSends(db: Queryable, days: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM bulk_sends b USING (
       SELECT id FROM bulk_sends s
        WHERE created_at < now() - make_interval(days => $1)
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.bulk_id = s.id)
        ORDER BY created_at LIMIT $2
        FOR UPDATE SKIP LOCKED) old
      WHERE b.id = old.id`,
    [days, limit],
  );
  return rowCount ?? 0;
}

/** Mobile-originated messages are kept as long as messages are. */
export async function deleteOldMobileOriginated(db: Queryable, days: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM mobile_originated mo USING (
       SELECT id FROM mobile_originated
        WHERE received_at < now() - make_interval(days => $1)
        ORDER BY received_at LIMIT $2
        FOR UPDATE SKIP LOCKED) old
      WHERE mo.id = old.id`,
    [days, limit],
  );
  return rowCount ?? 0;
}

/** Inbound messages are kept as long as messages are (a keyword's opt-out stays on its list). */
export async function deleteOldInboundMessages(db: Queryable, days: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM inbound_messages i USING (
       SELECT id FROM inbound_messages
        WHERE received_at < now() - make_interval(days => $1)
        ORDER BY received_at LIMIT $2
        FOR UPDATE SKIP LOCKED) old
      WHERE i.id = old.id`,
    [days, limit],
  );
  return rowCount ?? 0;
}
