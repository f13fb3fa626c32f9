import type { Pool, Queryable } from "../db/pool.ts";
import type { DeliveryWindow } from "../domain/delivery-window.ts";
import { keyChangesSettled } from "./key-cache.ts";

/**
 * An account's defaults for its sends (migration 030): smart encoding and a delivery window,
 * taken by every send that does not say otherwise. Set with `shiri account send-defaults`.
 */
export interface SendDefaults {
  smartEncoding: boolean;
  deliverBetween: DeliveryWindow | null;
}

export const NO_SEND_DEFAULTS: SendDefaults = { smartEncoding: false, deliverBetween: null };

/** The columns as stored (a row of account_send_defaults, or the key lookup's copy of them). */
export interface SendDefaultsRow {
  smart_encoding: boolean | null;
  deliver_start: string | null;
  deliver_end: string | null;
  deliver_time_zone: string | null;
}

export function sendDefaultsOf(row: SendDefaultsRow | undefined): SendDefaults {
  if (!row) return NO_SEND_DEFAULTS;
  const { deliver_start: start, deliver_end: end, deliver_time_zone: zone } = row;
  return {
    smartEncoding: row.smart_encoding === true,
    deliverBetween: start && end && zone ? { start, end, time_zone: zone } : null,
  };
}

export async function getSendDefaults(db: Queryable, accountId: string): Promise<SendDefaults> {
  const { rows } = await db.query<SendDefaultsRow>(
    `SELECT smart_encoding, deliver_start, deliver_end, deliver_time_zone
       FROM account_send_defaults WHERE account_id = $1`,
    [accountId],
  );
  return sendDefaultsOf(rows[0]);
}

/**
 * Changes what is given and keeps the rest, in one statement: `deliverBetween` null removes the
 * window. In force from the account's next request in every API process (the key lookup reads
 * them): it answers once no process can still hold the old (keyChangesSettled).
 */
export async function setSendDefaults(
  pool: Pool,
  accountId: string,
  change: { smartEncoding?: boolean; deliverBetween?: DeliveryWindow | null },
): Promise<SendDefaults> {
  const window = change.deliverBetween ?? null;
  const { rows } = await pool.query<SendDefaultsRow>(
    `INSERT INTO account_send_defaults AS d (account_id, smart_encoding, deliver_start, deliver_end, deliver_time_zone)
     VALUES ($1, COALESCE($2, false), $4, $5, $6)
     ON CONFLICT (account_id) DO UPDATE
       SET smart_encoding = COALESCE($2, d.smart_encoding),
           deliver_start = CASE WHEN $3 THEN EXCLUDED.deliver_start ELSE d.deliver_start END,
           deliver_end = CASE WHEN $3 THEN EXCLUDED.deliver_end ELSE d.deliver_end END,
           deliver_time_zone = CASE WHEN $3 THEN EXCLUDED.deliver_time_zone ELSE d.deliver_time_zone END,
           updated_at = now()
     RETURNING smart_encoding, deliver_start, deliver_end, deliver_time_zone`,
    [
      accountId,
      change.smartEncoding ?? null,
      change.deliverBetween !== undefined,
      window?.start ?? null,
      window?.end ?? null,
      window?.time_zone ?? null,
    ],
  );
  await keyChangesSettled();
  return sendDefaultsOf(rows[0]);
}
