import { type Pool, type Queryable, withTransaction } from "../db/pool.ts";
import { LEDGER_AVAILABLE, LEDGER_HELD } from "../ledger/ledger.ts";
import { type StuckMessage, whyStuck } from "./stuck-why.ts";

/**
 * `shiri audit`: what the ledger and the messages say must agree. Every account's balance is
 * recomputed from its ledger rows and compared with account_balances (available) and with the
 * charges its messages hold (held); holds of final messages, messages waiting too long and accepted
 * segments without a receipt are listed. All read in one snapshot, so traffic running meanwhile
 * never shows as a mismatch.
 */

/** At most this many of each finding are listed; the counts are always complete. */
const LISTED = 100;

export interface AuditOptions {
  /** A message not final this long after it was received (or, scheduled, after its send_at) is stuck. */
  stuckMinutes: number;
  /** An accepted segment with no receipt this long after acceptance is listed. */
  receiptHours: number;
}

export interface BalanceMismatch {
  account_id: string;
  available: number;
  available_from_ledger: number;
  held: number;
  held_from_ledger: number;
}

export interface Finding<T> {
  count: number;
  items: T[];
}

export interface AuditReport {
  clean: boolean;
  accounts_checked: number;
  balance_mismatches: Finding<BalanceMismatch>;
  /** Charges still held for messages already final: money no message will ever move. */
  holds_without_live_message: Finding<{ id: string; account_id: string; status: string; charge: number }>;
  /** Each with why it has not moved (its hold, its dispatch job, or none). */
  stuck_messages: Finding<StuckMessage> & {
    stuck_minutes: number;
  };
  parts_without_receipts: Finding<{
    message_id: string;
    part_no: number;
    /** The link that accepted the segment (the default links are named after their operators). */
    link: string;
    accepted_at: Date;
  }> & {
    receipt_hours: number;
  };
}

const BALANCES = `
  WITH ledger AS (
    SELECT account_id, ${LEDGER_AVAILABLE} AS available, ${LEDGER_HELD} AS held
      FROM ledger_entries GROUP BY account_id
  ), holds AS (
    SELECT account_id, sum(charge)::bigint AS held FROM messages WHERE billing = 'held' GROUP BY account_id
  )
  SELECT a.id AS account_id, COALESCE(b.balance, 0)::bigint AS available,
         COALESCE(l.available, 0)::bigint AS available_from_ledger,
         COALESCE(h.held, 0)::bigint AS held, COALESCE(l.held, 0)::bigint AS held_from_ledger,
         count(*) OVER ()::int AS accounts
    FROM accounts a
    LEFT JOIN account_balances b ON b.account_id = a.id
    LEFT JOIN ledger l ON l.account_id = a.id
    LEFT JOIN holds h ON h.account_id = a.id`;

async function listed<T extends object>(db: Queryable, text: string, values: unknown[]): Promise<Finding<T>> {
  const { rows } = await db.query<T & { total: number }>(text, [...values, LISTED]);
  return { count: rows[0]?.total ?? 0, items: rows.map(({ total: _, ...item }) => item as unknown as T) };
}

export function audit(pool: Pool, options: AuditOptions): Promise<AuditReport> {
  return withTransaction(pool, async (tx) => {
    await tx.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const balances = await tx.query<BalanceMismatch & { accounts: number }>(BALANCES);
    const mismatches = balances.rows
      .filter((r) => r.available !== r.available_from_ledger || r.held !== r.held_from_ledger)
      .map(({ accounts: _, ...r }) => r);
    const orphanHolds = await listed<AuditReport["holds_without_live_message"]["items"][number]>(
      tx,
      `SELECT id, account_id, status, charge, count(*) OVER ()::int AS total FROM messages
        WHERE billing = 'held' AND status IN ('success', 'failed') ORDER BY received_at LIMIT $1`,
      [],
    );
    const stuck = await listed<Omit<StuckMessage, "why">>(
      tx,
      `SELECT id, status, operator, received_at, attempts, last_error, count(*) OVER ()::int AS total FROM messages
        WHERE status IN ('created', 'enqueued', 'processing')
          AND COALESCE(send_at, received_at) < now() - $1::float8 * interval '1 minute'
        ORDER BY received_at LIMIT $2`,
      [options.stuckMinutes],
    );
    const unreceipted = await listed<AuditReport["parts_without_receipts"]["items"][number]>(
      tx,
      `SELECT message_id, part_no, link, accepted_at, count(*) OVER ()::int AS total FROM message_parts
        WHERE receipt_state IS NULL AND accepted_at < now() - $1::float8 * interval '1 hour'
        ORDER BY accepted_at LIMIT $2`,
      [options.receiptHours],
    );
    const why = await whyStuck(
      tx,
      stuck.items.map((m) => m.id),
    );
    const stuckItems = stuck.items.map((m) => ({ ...m, why: why.get(m.id) ?? "unknown" }));
    return {
      clean: mismatches.length + orphanHolds.count + stuck.count + unreceipted.count === 0,
      accounts_checked: balances.rows[0]?.accounts ?? 0,
      balance_mismatches: { count: mismatches.length, items: mismatches.slice(0, LISTED) },
      holds_without_live_message: orphanHolds,
      stuck_messages: { count: stuck.count, items: stuckItems, stuck_minutes: options.stuckMinutes },
      parts_without_receipts: { ...unreceipted, receipt_hours: options.receiptHours },
    };
  });
}
