import type { Pool } from "../db/pool.ts";

/**
 * Settled events (delivered or failed) are kept `days` days for inspection, then deleted, a
 * bounded chunk at a time so the sweep never holds long locks. Pending events are never deleted.
 */
export async function deleteSettledEvents(pool: Pool, days: number, limit: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM webhook_events WHERE id IN (
       SELECT id FROM webhook_events
        WHERE completed_at < now() - make_interval(days => $1)
        ORDER BY completed_at LIMIT $2)`,
    [days, limit],
  );
  return rowCount ?? 0;
}
