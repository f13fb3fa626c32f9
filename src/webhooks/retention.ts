import type { Queryable } from "../db/pool.ts";

/**
 * Settled events (delivered or failed) are kept `days` days for inspection, then deleted by the
 * retention pass (src/retention), a bounded chunk at a time, skipping rows another transaction
 * holds (a redelivery), so the sweep never holds long locks. Pending events are never deleted.
 */
export async function deleteSettledEvents(db: Queryable, days: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM webhook_events e USING (
       SELECT id FROM webhook_events
        WHERE completed_at < now() - make_interval(days => $1)
        ORDER BY completed_at LIMIT $2
        FOR UPDATE SKIP LOCKED) old
      WHERE e.id = old.id`,
    [days, limit],
  );
  return rowCount ?? 0;
}
