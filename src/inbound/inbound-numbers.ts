import type { Queryable } from "../db/pool.ts";
import { internationalForm } from "../domain/numbers.ts";

/**
 * Inbound numbers: the short codes and long numbers whose messages an account receives. A number
 * has one owner; an account may send from its own (replies come from the number written to).
 * Kept in international form (internationalForm), which is also how `from` must name one.
 */
export interface InboundNumber {
  number: string;
  created_at: string;
}

/** A short code or a number: 3 to 20 digits once in international form. */
export const INBOUND_NUMBER_PATTERN = /^[0-9]{3,20}$/;

/** The number as stored, or null when it cannot be one (letters, too short or long). */
export function inboundNumberOf(written: string): string | null {
  const number = internationalForm(written);
  return INBOUND_NUMBER_PATTERN.test(number) ? number : null;
}

/** The number belongs to another account: it has one owner. */
export class InboundNumberTakenError extends Error {}

/** Gives the number to the account; `added` false when it already had it. */
export async function addInboundNumber(
  db: Queryable,
  accountId: string,
  number: string,
): Promise<InboundNumber & { added: boolean }> {
  const { rows } = await db.query<{ account_id: string; created_at: Date; added: boolean }>(
    `WITH added AS (
       INSERT INTO inbound_numbers (number, account_id) VALUES ($1, $2)
       ON CONFLICT (number) DO NOTHING
       RETURNING account_id, created_at
     )
     SELECT account_id, created_at, true AS added FROM added
     UNION ALL
     SELECT account_id, created_at, false FROM inbound_numbers WHERE number = $1 AND NOT EXISTS (SELECT 1 FROM added)`,
    [number, accountId],
  );
  const row = rows[0];
  if (!row) throw new Error(`inbound number ${number} neither added nor found`);
  if (row.account_id !== accountId) throw new InboundNumberTakenError(`${number} belongs to another account`);
  return { number, created_at: row.created_at.toISOString(), added: row.added };
}

export async function listInboundNumbers(db: Queryable, accountId: string): Promise<InboundNumber[]> {
  const { rows } = await db.query<{ number: string; created_at: Date }>(
    "SELECT number, created_at FROM inbound_numbers WHERE account_id = $1 ORDER BY number",
    [accountId],
  );
  return rows.map((r) => ({ number: r.number, created_at: r.created_at.toISOString() }));
}

/** Whether the account owns this inbound number (written as listed), so may send from it. */
export async function ownsInboundNumber(db: Queryable, accountId: string, number: string): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM inbound_numbers WHERE number = $1 AND account_id = $2", [
    number,
    accountId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Takes the number from the account; false when the account did not have it. */
export async function removeInboundNumber(
  db: Queryable,
  accountId: string,
  number: string,
): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM inbound_numbers WHERE number = $1 AND account_id = $2", [
    number,
    accountId,
  ]);
  return (rowCount ?? 0) > 0;
}
