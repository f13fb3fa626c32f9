import type { Queryable } from "../db/pool.ts";
import { type Balance, balanceOf } from "../ledger/ledger.ts";

/*
 * The open-messages watermark (upkeep_marks 'open_messages'): every message not yet final was due
 * (its send_at when scheduled, else received_at) at or after it. Messages become final within
 * seconds of being due (or within their validity), so the held-balance sampler and the validity
 * sweeper read only the messages due since the mark, through messages_due_idx, instead of the
 * whole table: their cost follows the traffic, not the table's size, and status needs no index
 * (its updates stay HOT). A message scheduled weeks ahead is due in the future, so it never holds
 * the mark back; it is read, with its held charge, by every scan until it goes.
 *
 * Why the mark never passes an open message: it moves to the oldest due time among the open
 * messages the scan saw, or, when there is none, to MARGIN before the scan's own time. A message
 * committed after the scan was received (the API's clock) at most a few seconds before its commit
 * — a scheduled one is due later still — and a send commits within its statement and connection
 * timeouts (seconds), so MARGIN covers it with room for clock skew between hosts. Any mark once
 * valid stays valid, so processes may move it in any order.
 */
const MARGIN_SECONDS = 60;
const MARK = "open_messages";

/** The watermark: no open message was due before it (without a mark, the beginning of time). */
export async function openMark(db: Queryable): Promise<Date> {
  const { rows } = await db.query<{ at: Date }>("SELECT at FROM upkeep_marks WHERE name = $1", [MARK]);
  return rows[0]?.at ?? new Date(0);
}

/*
 * One scan from the mark: the held charges by currency, the age of the oldest open message that
 * is due by operator, and the mark moved to the oldest open message seen (or MARGIN ago) in the
 * same statement, so `now()` is no later than the snapshot. Unnamed on purpose: planned with the
 * mark's value, it reads the index for a recent mark.
 */
const SAMPLE_OPEN = `
  WITH open AS (
    SELECT operator, charge_currency, charge, billing, COALESCE(send_at, received_at) AS due_at FROM messages
     WHERE COALESCE(send_at, received_at) >= $1 AND status NOT IN ('success', 'failed')
  ), moved AS (
    INSERT INTO upkeep_marks (name, at)
    VALUES ($3, LEAST((SELECT min(due_at) FROM open), now() - make_interval(secs => $2)))
    ON CONFLICT (name) DO UPDATE SET at = EXCLUDED.at
  )
  SELECT 'held' AS kind, charge_currency AS key, sum(charge)::float8 AS value FROM open
   WHERE billing = 'held' GROUP BY charge_currency
  UNION ALL
  SELECT 'oldest', operator, extract(epoch FROM now() - min(due_at))::float8 FROM open
   WHERE due_at <= now() GROUP BY operator`;

export interface OpenMessages {
  /** The charges open messages hold, per currency. */
  held: { currency: string; held: number }[];
  /** Seconds since the oldest open message of each operator was due (operators with none absent). */
  oldestSeconds: { operator: string; seconds: number }[];
}

/** What open messages hold and how long the oldest has waited; moves the watermark forward as it reads. */
export async function sampleOpenMessages(db: Queryable): Promise<OpenMessages> {
  const since = await openMark(db);
  const { rows } = await db.query<{ kind: "held" | "oldest"; key: string; value: number }>(SAMPLE_OPEN, [
    since,
    MARGIN_SECONDS,
    MARK,
  ]);
  return {
    held: rows.filter((r) => r.kind === "held").map((r) => ({ currency: r.key, held: r.value })),
    oldestSeconds: rows
      .filter((r) => r.kind === "oldest")
      .map((r) => ({ operator: r.key, seconds: r.value })),
  };
}

/** An account's balance, its held money read from the messages due since the watermark. */
export async function balanceNow(db: Queryable, accountId: string): Promise<Balance | null> {
  return balanceOf(db, accountId, await openMark(db));
}
