import type { Queryable } from "../../src/db/pool.ts";

/**
 * An account's recipients bucket as it stands now: its stored level drained at `perMinute`
 * (the account's recipients-per-minute limit) since it was stored.
 */
export async function recipientsLevel(db: Queryable, accountId: string, perMinute: number): Promise<number> {
  const { rows } = await db.query<{ level: number }>(
    `SELECT greatest(0, recipients_level
                        - extract(epoch FROM clock_timestamp() - recipients_at) * $2 / 60.0)::float8 AS level
       FROM rate_limit_state WHERE subject = 'account:' || $1::text`,
    [accountId, perMinute],
  );
  return rows[0]?.level ?? Number.NaN;
}
