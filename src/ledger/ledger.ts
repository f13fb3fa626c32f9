import { commitWith, type Queryable, sqlState, type Tx } from "../db/pool.ts";

/**
 * The prepaid ledger. Every balance change is a ledger row written in the same transaction as
 * the running balance in account_balances, so the balance can always be recomputed from the
 * rows; a CHECK constraint keeps it from ever going negative. A row is written for each top-up,
 * each send's hold (a single send's names its message, a bulk send's its bulk), each message's
 * release, and each capture batch of an account: a capture moves no balance, and each message's
 * own billing (held, captured, released) is on the message (docs/decisions/0032).
 */

export class InsufficientBalanceError extends Error {}

export async function topUp(tx: Tx, accountId: string, amount: number): Promise<number> {
  await tx.query("INSERT INTO ledger_entries (account_id, kind, amount) VALUES ($1, 'top_up', $2)", [
    accountId,
    amount,
  ]);
  const { rows } = await tx.query<{ balance: number }>(
    "UPDATE account_balances SET balance = balance + $2 WHERE account_id = $1 RETURNING balance",
    [accountId, amount],
  );
  if (!rows[0]) throw new Error(`no account ${accountId}`);
  return rows[0].balance;
}

/*
 * The holds, one ledger row per send, and the one debit of the account's balance that covers them.
 */
const HOLD = `
  WITH h AS (SELECT * FROM unnest($2::bigint[], $3::uuid[], $4::uuid[]) AS h(amount, message_id, bulk_id)),
  debited AS (
    UPDATE account_balances SET balance = balance - (SELECT sum(amount) FROM h) WHERE account_id = $1
    RETURNING account_id
  )
  INSERT INTO ledger_entries (account_id, kind, amount, message_id, bulk_id)
  SELECT d.account_id, 'hold', h.amount, h.message_id, h.bulk_id FROM h, debited d`;

/**
 * Holds each send's amount and commits the sends' transaction with them. The balance row's lock
 * is what serialises one account's sends, so the debit — one for all the holds — is the last
 * statement, with the COMMIT queued behind it (commitWith): the lock is held for two round trips
 * and never for a turn of the event loop. A balance that does not cover them trips the CHECK
 * constraint: nothing is written and InsufficientBalanceError is thrown. Holds of 0 (a send whose
 * recipients all opted out) are left out.
 */
export async function holdAndCommit(
  tx: Tx,
  accountId: string,
  given: readonly { amount: number; messageId: string | null; bulkId: string | null }[],
): Promise<void> {
  // A send whose every recipient opted out holds nothing: no ledger row (amounts are positive),
  // no debit, and the caller's withTransaction commits as usual.
  const holds = given.filter((h) => h.amount > 0);
  if (holds.length === 0) return;
  try {
    const { rowCount } = await commitWith(tx, {
      name: "shiri_hold",
      text: HOLD,
      values: [
        accountId,
        holds.map((h) => h.amount),
        holds.map((h) => h.messageId),
        holds.map((h) => h.bulkId),
      ],
    });
    if (rowCount !== holds.length) throw new Error(`no balance row for account ${accountId}`);
  } catch (err) {
    if (sqlState(err) === "23514") throw new InsufficientBalanceError();
    throw err;
  }
}

/**
 * The ledger rows of a capture, from `captured` (the messages whose billing just moved from held,
 * with their account_id and charge): a capture moves no balance, so one row an account for the
 * lot, not one a message (docs/decisions/0032). Every statement that captures writes them so.
 */
export const captureRows = (captured: string) => `
  INSERT INTO ledger_entries (account_id, kind, amount)
  SELECT account_id, 'capture', sum(charge) FROM ${captured} WHERE charge > 0 GROUP BY account_id`;

/**
 * Turns the holds of these messages into charges: once per message, whoever calls first (the
 * message's billing moves from held under its row lock).
 */
export async function capture(tx: Queryable, messageIds: readonly string[]): Promise<void> {
  await tx.query(
    `WITH moved AS (
       UPDATE messages SET billing = 'captured' WHERE id = ANY($1::uuid[]) AND billing = 'held'
       RETURNING account_id, charge
     )
     ${captureRows("moved")}`,
    [messageIds],
  );
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
       UPDATE account_balances b SET balance = b.balance + s.total
         FROM (SELECT account_id, sum(charge) AS total FROM moved GROUP BY account_id) s
        WHERE b.account_id = s.account_id
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

/**
 * The account's balance. Only a message not yet final holds money, and none of those was due
 * before `openSince` (the open-messages watermark, src/lifecycle/open-mark.ts): held is read from
 * the messages due since, through the due-time index, so its cost follows the last minute's
 * traffic, not the account's history. Unnamed: planned with the watermark's value.
 */
export async function balanceOf(db: Queryable, accountId: string, openSince: Date): Promise<Balance | null> {
  const { rows } = await db.query<Balance>(
    `SELECT a.currency, b.balance AS available,
            COALESCE((SELECT sum(charge) FROM messages m
                       WHERE COALESCE(m.send_at, m.received_at) >= $2
                         AND m.account_id = a.id AND m.billing = 'held'), 0)::bigint AS held
       FROM accounts a JOIN account_balances b ON b.account_id = a.id WHERE a.id = $1`,
    [accountId, openSince],
  );
  return rows[0] ?? null;
}

/*
 * What ledger rows add up to, as SQL aggregates over their `kind` and `amount` (every reader of the
 * ledger uses these, so the meaning of each kind is written once): available is top-ups less holds
 * plus releases; held is holds less captures and releases.
 */
export const LEDGER_AVAILABLE = `COALESCE(sum(CASE kind WHEN 'top_up' THEN amount WHEN 'hold' THEN -amount
                                          WHEN 'release' THEN amount ELSE 0 END), 0)::bigint`;
export const LEDGER_HELD = `COALESCE(sum(CASE kind WHEN 'hold' THEN amount WHEN 'capture' THEN -amount
                                     WHEN 'release' THEN -amount ELSE 0 END), 0)::bigint`;

/** The balance as the ledger rows alone say it; equal to balanceOf unless something is wrong. */
export async function balanceFromLedger(
  db: Queryable,
  accountId: string,
): Promise<{ available: number; held: number }> {
  const { rows } = await db.query<{ available: number; held: number }>(
    `SELECT ${LEDGER_AVAILABLE} AS available, ${LEDGER_HELD} AS held
       FROM ledger_entries WHERE account_id = $1`,
    [accountId],
  );
  return rows[0] ?? { available: 0, held: 0 };
}
