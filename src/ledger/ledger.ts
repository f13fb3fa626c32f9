import type { Queryable, Tx } from "../db/pool.ts";

/**
 * The prepaid ledger. Every balance change is a ledger row written in the same transaction as
 * the running balance on the account row, so the balance can always be recomputed from the
 * rows and never goes negative (a CHECK constraint backs the guard in the queries).
 */

export async function topUp(tx: Tx, accountId: string, amount: number): Promise<number> {
  await tx.query("INSERT INTO ledger_entries (account_id, kind, amount) VALUES ($1, 'top_up', $2)", [
    accountId,
    amount,
  ]);
  const { rows } = await tx.query<{ balance: number }>(
    "UPDATE accounts SET balance = balance + $2 WHERE id = $1 RETURNING balance",
    [accountId, amount],
  );
  if (!rows[0]) throw new Error(`no account ${accountId}`);
  return rows[0].balance;
}

/**
 * Holds `amount` for a send. Returns false, writing nothing, when the balance does not cover it.
 * Callers run this last in their transaction: it takes the account row lock, and holding that
 * lock for as short a time as possible is what lets one account send in parallel.
 */
export async function hold(
  tx: Tx,
  accountId: string,
  amount: number,
  ref: { messageId?: string; bulkId?: string },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `WITH debited AS (
       UPDATE accounts SET balance = balance - $2 WHERE id = $1 AND balance >= $2 RETURNING id
     )
     INSERT INTO ledger_entries (account_id, kind, amount, message_id, bulk_id)
     SELECT id, 'hold', $2, $3, $4 FROM debited`,
    [accountId, amount, ref.messageId ?? null, ref.bulkId ?? null],
  );
  return rowCount === 1;
}

/** Turns the holds of these messages into charges: once per message, whoever calls first. */
export async function capture(tx: Queryable, messageIds: readonly string[]): Promise<number> {
  const { rowCount } = await tx.query(
    `WITH moved AS (
       UPDATE messages SET billing = 'captured' WHERE id = ANY($1::uuid[]) AND billing = 'held'
       RETURNING id, account_id, charge
     )
     INSERT INTO ledger_entries (account_id, kind, amount, message_id)
     SELECT account_id, 'capture', charge, id FROM moved WHERE charge > 0`,
    [messageIds],
  );
  return rowCount ?? 0;
}

/** Gives the holds of these messages back to their accounts: once per message. */
export async function release(tx: Queryable, messageIds: readonly string[]): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `WITH moved AS (
       UPDATE messages SET billing = 'released' WHERE id = ANY($1::uuid[]) AND billing = 'held'
       RETURNING id, account_id, charge
     ), entries AS (
       INSERT INTO ledger_entries (account_id, kind, amount, message_id)
       SELECT account_id, 'release', charge, id FROM moved WHERE charge > 0
     ), credited AS (
       UPDATE accounts a SET balance = a.balance + s.total
         FROM (SELECT account_id, sum(charge) AS total FROM moved GROUP BY account_id) s
        WHERE a.id = s.account_id
     )
     SELECT count(*)::int AS n FROM moved`,
    [messageIds],
  );
  return rows[0]?.n ?? 0;
}

export interface Balance {
  currency: string;
  /** What new sends can spend. */
  available: number;
  /** Held for messages not yet accepted or failed by a carrier. */
  held: number;
}

export async function balanceOf(db: Queryable, accountId: string): Promise<Balance | null> {
  const { rows } = await db.query<Balance>(
    `SELECT a.currency, a.balance AS available,
            COALESCE((SELECT sum(charge) FROM messages m WHERE m.account_id = a.id AND m.billing = 'held'), 0)::bigint AS held
       FROM accounts a WHERE a.id = $1`,
    [accountId],
  );
  return rows[0] ?? null;
}

/** The balance as the ledger rows alone say it; equal to balanceOf unless something is wrong. */
export async function balanceFromLedger(
  db: Queryable,
  accountId: string,
): Promise<{ available: number; held: number }> {
  const { rows } = await db.query<{ available: number; held: number }>(
    `SELECT COALESCE(sum(CASE kind WHEN 'top_up' THEN amount WHEN 'hold' THEN -amount
                                   WHEN 'release' THEN amount ELSE 0 END), 0)::bigint AS available,
            COALESCE(sum(CASE kind WHEN 'hold' THEN amount WHEN 'capture' THEN -amount
                                   WHEN 'release' THEN -amount ELSE 0 END), 0)::bigint AS held
       FROM ledger_entries WHERE account_id = $1`,
    [accountId],
  );
  return rows[0] ?? { available: 0, held: 0 };
}
