import type { Operator } from "../../carriers/index.ts";
import type { Queryable } from "../db/pool.ts";
import { refreshDelivery } from "../lifecycle/index.ts";
import { FINAL_STATES, type Receipt } from "./read-receipt.ts";

const FINAL = [...FINAL_STATES];

export interface ApplyResult {
  /** Receipts that matched a recorded segment. */
  matched: number;
  /** Receipts kept aside because no segment had that id yet. */
  early: number;
  /** Seconds from acceptance to delivery of each message this batch delivered. */
  delivered: number[];
  /** Receipts that matched a segment but changed nothing (repeats, or beaten by a final state). */
  duplicates: number;
  /**
   * Messages whose segments this batch updated while they were not yet `success` (their batch's
   * settle still open): their delivery is to be looked at again once that settle has committed.
   */
  notYetAccepted: string[];
}

/** Rank of a receipt state: DELIVRD, then any other final state, then an intermediate one. */
const RANK = "CASE WHEN state = 'DELIVRD' THEN 0 WHEN state = ANY($7::text[]) THEN 1 ELSE 2 END";

/*
 * One receipt per id (the best ranked; ties by content, so the outcome never depends on arrival
 * order), matched to the most recent segment submitted with that id and no earlier than the
 * receipt allows (a reused id never reaches a months-old message); a receipt for a whole message
 * sets every segment of it. Returns the messages touched, then every receipt with whether it
 * matched a segment (known) and whether it changed one (fresh).
 *
 * The segments are read and updated through `message_id = ANY (ARRAY(...))`, an index condition
 * on the primary key. As plain joins, a plan made before the table had statistics hashed the whole
 * of message_parts twice a batch, and the prepared statement kept that plan as the table grew
 * (3–16 ms a batch at 5,000–15,000 segments). A plan made while the table is a page or two still
 * scans it, until the next ANALYZE has it planned again.
 */
const APPLY_RECEIPTS = `
  WITH given AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::bool[], $6::timestamptz[])
             AS g(smsc_id, state, err, whole, submitted_after)),
  r AS (
    SELECT DISTINCT ON (smsc_id) * FROM given
     ORDER BY smsc_id, ${RANK}, state, err NULLS LAST, whole DESC, submitted_after NULLS FIRST),
  hit AS (
    SELECT r.smsc_id, r.state, r.err, r.whole, s.message_id, s.part_no
      FROM r CROSS JOIN LATERAL (
        SELECT p.message_id, p.part_no FROM message_parts p
         WHERE p.operator = $1 AND p.smsc_id = r.smsc_id
           AND p.accepted_at >= coalesce(r.submitted_after, '-infinity'::timestamptz)
         ORDER BY p.accepted_at DESC, p.message_id DESC, p.part_no DESC
         LIMIT 1) s),
  target AS (
    SELECT DISTINCT ON (p.message_id, p.part_no) p.message_id, p.part_no, h.state, h.err
      FROM hit h JOIN message_parts p ON p.message_id = h.message_id AND (h.whole OR p.part_no = h.part_no)
     WHERE p.message_id = ANY (ARRAY(SELECT message_id FROM hit))
     ORDER BY p.message_id, p.part_no, ${RANK.replaceAll("state", "h.state")}, h.state, h.err NULLS LAST),
  updated AS (
    UPDATE message_parts p SET receipt_state = t.state, receipt_err = t.err, receipt_at = now()
      FROM target t
     WHERE p.message_id = ANY (ARRAY(SELECT message_id FROM target))
       AND p.message_id = t.message_id AND p.part_no = t.part_no
       AND p.receipt_state IS DISTINCT FROM t.state
       AND (p.receipt_state IS NULL OR NOT (p.receipt_state = ANY($7::text[])) OR t.state = 'DELIVRD')
    RETURNING p.message_id, p.part_no)
  SELECT DISTINCT u.message_id, NULL::text AS smsc_id, NULL::text AS state, NULL::text AS err,
         NULL::boolean AS whole, NULL::timestamptz AS submitted_after, true AS known, true AS fresh
    FROM updated u
  UNION ALL
  SELECT NULL, r.smsc_id, r.state, r.err, r.whole, r.submitted_after, h.smsc_id IS NOT NULL,
         EXISTS (SELECT 1 FROM updated u WHERE u.message_id = h.message_id AND (h.whole OR u.part_no = h.part_no))
    FROM r LEFT JOIN hit h ON h.smsc_id = r.smsc_id`;

/**
 * Applies a batch of one operator's receipts in set-based statements. A segment's state only
 * moves forward (a final state is kept, except that DELIVRD wins; an intermediate state never
 * replaces a final one), so duplicates change nothing. A receipt that matches no segment is kept
 * in early_receipts: its submit_sm_resp may not be recorded yet.
 */
export async function applyReceipts(
  tx: Queryable,
  operator: Operator,
  receipts: readonly Receipt[],
): Promise<ApplyResult> {
  if (receipts.length === 0)
    return { matched: 0, early: 0, delivered: [], duplicates: 0, notYetAccepted: [] };
  const { rows } = await tx.query<{
    message_id: string | null;
    smsc_id: string | null;
    state: string;
    err: string | null;
    whole: boolean;
    submitted_after: Date | null;
    known: boolean;
    fresh: boolean;
  }>({
    // Named: each receipt finds its segment by key (a LATERAL with LIMIT 1) and each segment is
    // read and updated by primary key, so one generic plan serves every batch; planning it on
    // every call was half its cost (1.6 ms a call, pg_stat_statements).
    name: "shiri_apply_receipts",
    text: APPLY_RECEIPTS,
    values: [
      operator,
      receipts.map((r) => r.smscId),
      receipts.map((r) => r.state),
      receipts.map((r) => r.err ?? null),
      receipts.map((r) => r.scope === "message"),
      receipts.map((r) => r.submittedAfter ?? null),
      FINAL,
    ],
  });
  const touched = rows.flatMap((r) => (r.message_id ? [r.message_id] : []));
  const given = rows.filter((r) => r.smsc_id !== null);
  const unknown = given.filter((r) => !r.known);
  const duplicates = receipts.length - given.length + given.filter((r) => r.known && !r.fresh).length;
  if (unknown.length > 0) {
    await tx.query(
      `INSERT INTO early_receipts (operator, smsc_id, state, err, whole_message, submitted_after)
       SELECT $1::text, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bool[], $6::timestamptz[])
       ON CONFLICT DO NOTHING`,
      [
        operator,
        unknown.map((r) => r.smsc_id),
        unknown.map((r) => r.state),
        unknown.map((r) => r.err),
        unknown.map((r) => r.whole),
        unknown.map((r) => r.submitted_after),
      ],
    );
  }
  // The touched messages' statuses first: only accepted ones can be delivered now, and those not
  // yet accepted are the settle's to finish (looked at again once it has committed). Read before
  // the refresh, a message whose settle commits in between is still looked at again.
  const statuses =
    touched.length === 0
      ? []
      : // Unnamed: a generic plan of it measured slower than planning each one.
        (
          await tx.query<{ id: string; status: string }>(
            "SELECT id, status FROM messages WHERE id = ANY($1::uuid[])",
            [touched],
          )
        ).rows;
  const accepted = statuses.filter((m) => m.status === "success").map((m) => m.id);
  const notYetAccepted = statuses
    .filter((m) => m.status === "enqueued" || m.status === "processing")
    .map((m) => m.id);
  const delivered = await refreshDelivery(tx, accepted);
  return {
    matched: receipts.length - unknown.length,
    early: unknown.length,
    delivered,
    duplicates,
    notYetAccepted,
  };
}

interface EarlyRow {
  smsc_id: string;
  state: string;
  err: string | null;
  whole_message: boolean;
  submitted_after: Date | null;
}

function fromEarly(r: EarlyRow): Receipt {
  return {
    smscId: r.smsc_id,
    state: r.state,
    err: r.err,
    scope: r.whole_message ? "message" : "segment",
    ...(r.submitted_after ? { submittedAfter: r.submitted_after } : {}),
  };
}

/**
 * Applies the early receipts for these SMSC ids, whose segments have just been recorded.
 * Returns the delivery latencies of the messages this delivered.
 */
export async function applyEarlyReceipts(
  tx: Queryable,
  operator: Operator,
  smscIds: readonly string[],
): Promise<number[]> {
  if (smscIds.length === 0) return [];
  const early = await tx.query<EarlyRow>({
    // Named: every dispatch batch runs it; the table holds only receipts still waiting for a segment.
    name: "shiri_take_early_receipts",
    text: `DELETE FROM early_receipts WHERE operator = $1 AND smsc_id = ANY($2::text[])
           RETURNING smsc_id, state, err, whole_message, submitted_after`,
    values: [operator, smscIds],
  });
  if (early.rows.length === 0) return [];
  const applied = await applyReceipts(tx, operator, early.rows.map(fromEarly));
  return applied.delivered;
}

/**
 * Applies early receipts whose segment has since been recorded, and drops those that stayed
 * unmatched past the grace period. Returns how many were dropped as unknown.
 */
export async function sweepEarlyReceipts(
  tx: Queryable,
  graceSeconds: number,
): Promise<{
  applied: number;
  unknown: { operator: string; smsc_id: string; state: string }[];
  notYetAccepted: string[];
}> {
  // Each early receipt probes the segments' index (a LATERAL with LIMIT 1 is never turned into a
  // join): as a plain EXISTS, the planner, guessing hundreds of early receipts in a table it had
  // never analysed, hashed the whole of message_parts on every sweep to match one or none.
  const matched = await tx.query<EarlyRow & { operator: Operator }>(
    `DELETE FROM early_receipts e
      USING (SELECT r.operator, r.smsc_id, r.state FROM early_receipts r
              CROSS JOIN LATERAL (SELECT 1 FROM message_parts p
                                   WHERE p.operator = r.operator AND p.smsc_id = r.smsc_id
                                     AND p.accepted_at >= coalesce(r.submitted_after, '-infinity'::timestamptz)
                                   LIMIT 1) segment) found
      WHERE (e.operator, e.smsc_id, e.state) = (found.operator, found.smsc_id, found.state)
     RETURNING e.operator, e.smsc_id, e.state, e.err, e.whole_message, e.submitted_after`,
  );
  const byOperator = new Map<Operator, Receipt[]>();
  for (const r of matched.rows) {
    const list = byOperator.get(r.operator) ?? [];
    list.push(fromEarly(r));
    byOperator.set(r.operator, list);
  }
  const notYetAccepted: string[] = [];
  for (const [operator, list] of byOperator)
    notYetAccepted.push(...(await applyReceipts(tx, operator, list)).notYetAccepted);
  const stale = await tx.query<{ operator: string; smsc_id: string; state: string }>(
    `DELETE FROM early_receipts WHERE received_at < now() - make_interval(secs => $1)
     RETURNING operator, smsc_id, state`,
    [graceSeconds],
  );
  return { applied: matched.rows.length, unknown: stale.rows, notYetAccepted };
}
