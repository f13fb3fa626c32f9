import type { Queryable } from "../db/pool.ts";
import { FINAL_STATES } from "../domain/receipt-states.ts";
import {
  type CrossBaseRelation,
  type IdRelation,
  type NumberCandidate,
  numberCandidates,
  numberKey,
} from "../domain/smsc-id.ts";
import { type Delivery, refreshDelivery } from "../lifecycle/index.ts";
import { announceWork, EARLY_RECEIPTS_TOPIC } from "../queue/wakeups.ts";
import type { Receipt } from "./read-receipt.ts";

const FINAL = [...FINAL_STATES];

/** How a link's receipts name segments: exactly, or also as the same number written another way. */
export interface Matching {
  tolerant: boolean;
  /**
   * Whether the link has shown it writes one number in two bases this way, so that an id of
   * digits only may be read so too (a guess otherwise: never made). Absent: it has not.
   */
  crossBase?: (relation: CrossBaseRelation) => boolean;
}

/** A candidate a tolerant link may match by: any the ids show, and guesses the link has shown. */
function usable(candidate: NumberCandidate, matching: Matching): boolean {
  return (
    candidate.relation === "same_number" ||
    candidate.shown ||
    (matching.crossBase?.(candidate.relation) ?? false)
  );
}

/** Receipts matched, by how their id named the segment. */
export type RelationCounts = Partial<Record<IdRelation, number>>;

export interface ApplyResult {
  /** Receipts that matched a recorded segment. */
  matched: number;
  /** Receipts kept aside because no segment had that id yet. */
  early: number;
  /** Each message this batch delivered, with the seconds from its acceptance. */
  delivered: Delivery[];
  /** Receipts that matched a segment but changed nothing (repeats, or beaten by a final state). */
  duplicates: number;
  /**
   * Messages whose segments this batch updated while they were not yet `success` (their batch's
   * settle still open): their delivery is to be looked at again once that settle has committed.
   */
  notYetAccepted: string[];
  /** Receipts that matched, by how their id named the segment. */
  relations: RelationCounts;
  /** Of those, the cross-base matches whose ids showed their bases: what the link has shown. */
  shown: RelationCounts;
  /** Receipt ids that could name two segments or more: never guessed, dropped. */
  ambiguous: string[];
}

const NOTHING: ApplyResult = {
  matched: 0,
  early: 0,
  delivered: [],
  duplicates: 0,
  notYetAccepted: [],
  relations: {},
  shown: {},
  ambiguous: [],
};

/** Rank of a receipt state: DELIVRD, then any other final state, then an intermediate one. */
const RANK = "CASE WHEN state = 'DELIVRD' THEN 0 WHEN state = ANY($7::text[]) THEN 1 ELSE 2 END";

/**
 * A receipt kept aside (the row `receipt`, with its received_at) never names a segment (`p`) whose
 * submit went out after it came.
 */
const sentBeforeReceipt = (receipt: string) =>
  `(${receipt}.received_at IS NULL OR p.sent_after IS NULL OR p.sent_after <= ${receipt}.received_at)`;

/*
 * One receipt per id (the best ranked; ties by content, so the outcome never depends on arrival
 * order), matched to the most recent segment submitted with that id and no earlier than the
 * receipt allows (a reused id never reaches a months-old message), nor after a receipt kept aside
 * came (an id reused since, by an SMSC whose counter restarted); a receipt for a whole message
 * sets every segment of it, and so does one for an id its segments share (an SMSC that gives every
 * segment of a message one id: they cannot be told apart, and a receipt for the most recent alone
 * left the others without one for ever). Returns the messages touched, then every receipt with whether it
 * matched a segment (known) and whether it changed one (fresh).
 *
 * The segments are read by primary key, each hit's in a LATERAL that OFFSET 0 keeps from being
 * flattened into a join, and updated joined to those few (a nested loop on the primary key). Both
 * went through `message_id = ANY (ARRAY(...))` before: when message_parts grew a column
 * (sent_after), a young table's guessed size tipped each of them to a scan. As plain joins of the
 * whole table, a plan made before the table had statistics hashed the whole
 * of message_parts twice a batch, and the prepared statement kept that plan as the table grew
 * (3–16 ms a batch at 5,000–15,000 segments). A plan made while the table is a page or two still
 * scans it, until the next ANALYZE has it planned again. Whether a receipt changed a segment
 * (fresh) is an IN over `updated`, which Postgres hashes once: as a correlated EXISTS it scanned
 * `updated` for every receipt, n² in the batch (7–9 ms for a batch of 500, against under 1).
 */
const APPLY_RECEIPTS = `
  WITH given AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::bool[], $6::timestamptz[], $8::timestamptz[])
             AS g(smsc_id, state, err, whole, submitted_after, received_at)),
  r AS (
    SELECT DISTINCT ON (smsc_id) * FROM given
     ORDER BY smsc_id, ${RANK}, state, err NULLS LAST, whole DESC, submitted_after NULLS FIRST),
  hit AS (
    SELECT r.smsc_id, r.state, r.err, r.whole, s.message_id, s.part_no
      FROM r CROSS JOIN LATERAL (
        SELECT p.message_id, p.part_no FROM message_parts p
         WHERE p.link = $1 AND p.smsc_id = r.smsc_id
           AND p.accepted_at >= coalesce(r.submitted_after, '-infinity'::timestamptz)
           AND ${sentBeforeReceipt("r")}
         ORDER BY p.accepted_at DESC, p.message_id DESC, p.part_no DESC
         LIMIT 1) s),
  target AS (
    SELECT DISTINCT ON (p.message_id, p.part_no) p.message_id, p.part_no, h.state, h.err
      FROM hit h CROSS JOIN LATERAL (
        SELECT q.message_id, q.part_no FROM message_parts q
         WHERE q.message_id = h.message_id
           AND (h.whole OR q.part_no = h.part_no OR (q.smsc_id = h.smsc_id AND q.link = $1)) OFFSET 0) p
     ORDER BY p.message_id, p.part_no, ${RANK.replaceAll("state", "h.state")}, h.state, h.err NULLS LAST),
  updated AS (
    UPDATE message_parts p SET receipt_state = t.state, receipt_err = t.err, receipt_at = now()
      FROM target t
     WHERE p.message_id = t.message_id AND p.part_no = t.part_no
       AND p.receipt_state IS DISTINCT FROM t.state
       AND (p.receipt_state IS NULL OR NOT (p.receipt_state = ANY($7::text[])) OR t.state = 'DELIVRD')
    RETURNING p.message_id, p.part_no, p.smsc_id)
  SELECT DISTINCT u.message_id, NULL::text AS smsc_id, NULL::text AS state, NULL::text AS err,
         NULL::boolean AS whole, NULL::timestamptz AS submitted_after, true AS known, true AS fresh
    FROM updated u
  UNION ALL
  SELECT NULL, r.smsc_id, r.state, r.err, r.whole, r.submitted_after, h.smsc_id IS NOT NULL,
         COALESCE(CASE WHEN h.whole THEN h.message_id IN (SELECT message_id FROM updated)
                       ELSE (h.message_id, h.smsc_id) IN (SELECT message_id, smsc_id FROM updated) END, false)
    FROM r LEFT JOIN hit h ON h.smsc_id = r.smsc_id`;

/**
 * Applies a batch of one link's receipts in set-based statements. A segment's state only moves
 * forward (a final state is kept, except that DELIVRD wins; an intermediate state never replaces
 * a final one), so duplicates change nothing. A receipt is matched by its exact id first; on a
 * tolerant link, one that matches no id exactly is then matched as the same number written
 * another way, when that names exactly one segment (`matchByNumber`). A receipt that matches no
 * segment is kept in early_receipts: its submit_sm_resp may not be recorded yet.
 */
export async function applyReceipts(
  tx: Queryable,
  link: string,
  receipts: readonly Receipt[],
  matching: Matching = { tolerant: false },
): Promise<ApplyResult> {
  if (receipts.length === 0) return { ...NOTHING };
  const exact = await applyExactly(tx, link, receipts);
  const byNumber = matching.tolerant
    ? await matchByNumber(tx, link, exact.unknown, matching)
    : { matched: [], ambiguous: [], relations: {}, shown: {} };
  const renamed = new Set(byNumber.matched.map((m) => m.given));
  const ambiguous = new Set(byNumber.ambiguous);
  const early = exact.unknown.filter((r) => !renamed.has(r) && !ambiguous.has(r.smscId));
  if (early.length > 0) await keepEarly(tx, link, early, matching);
  const again =
    byNumber.matched.length > 0
      ? await applyExactly(
          tx,
          link,
          byNumber.matched.map((m) => m.receipt),
        )
      : null;
  const touched = [...exact.touched, ...(again?.touched ?? [])];
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
            [[...new Set(touched)]],
          )
        ).rows;
  const accepted = statuses.filter((m) => m.status === "success").map((m) => m.id);
  const notYetAccepted = statuses
    .filter((m) => m.status === "enqueued" || m.status === "processing")
    .map((m) => m.id);
  const delivered = await refreshDelivery(tx, accepted);
  const exactMatches = receipts.length - exact.unknown.length;
  return {
    matched: exactMatches + byNumber.matched.length,
    early: early.length,
    delivered,
    duplicates: exact.duplicates + (again?.duplicates ?? 0),
    notYetAccepted,
    relations: { ...(exactMatches > 0 ? { exact: exactMatches } : {}), ...byNumber.relations },
    shown: byNumber.shown,
    ambiguous: byNumber.ambiguous,
  };
}

/** One statement: the receipts matched by exact id; the messages touched and those matching none. */
async function applyExactly(
  tx: Queryable,
  link: string,
  receipts: readonly Receipt[],
): Promise<{ touched: string[]; unknown: Receipt[]; duplicates: number }> {
  const { rows } = await tx.query<{
    message_id: string | null;
    smsc_id: string | null;
    known: boolean;
    fresh: boolean;
  }>({
    // Named: each receipt finds its segment by key (a LATERAL with LIMIT 1) and each segment is
    // read and updated by primary key, so one generic plan serves every batch; planning it on
    // every call was half its cost (1.6 ms a call, pg_stat_statements).
    name: "shiri_apply_receipts",
    text: APPLY_RECEIPTS,
    values: [
      link,
      receipts.map((r) => r.smscId),
      receipts.map((r) => r.state),
      receipts.map((r) => r.err ?? null),
      receipts.map((r) => r.scope === "message"),
      receipts.map((r) => r.submittedAfter ?? null),
      FINAL,
      receipts.map((r) => r.receivedAt ?? null),
    ],
  });
  const touched = rows.flatMap((r) => (r.message_id ? [r.message_id] : []));
  const given = rows.filter((r) => r.smsc_id !== null);
  const unknownIds = new Set(given.filter((r) => !r.known).map((r) => r.smsc_id));
  const duplicates = receipts.length - given.length + given.filter((r) => r.known && !r.fresh).length;
  // Of several receipts for one unknown id, each is kept (early_receipts keeps one per state).
  return { touched, unknown: receipts.filter((r) => unknownIds.has(r.smscId)), duplicates };
}

/*
 * For each number key a receipt may stand for, the segments recorded under it (as their id, or
 * as their id's number), at most two apiece: one is a match, two are a receipt never guessed.
 */
const SEGMENTS_BY_NUMBER = `
  SELECT g.i, s.smsc_id, s.message_id, s.part_no
    FROM unnest($2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[]) AS g(key, i, submitted_after, received_at)
   CROSS JOIN LATERAL (
     (SELECT p.smsc_id, p.message_id, p.part_no FROM message_parts p
       WHERE p.link = $1 AND p.smsc_id = g.key
         AND p.accepted_at >= coalesce(g.submitted_after, '-infinity'::timestamptz) AND ${sentBeforeReceipt("g")}
       ORDER BY p.accepted_at DESC LIMIT 2)
     UNION ALL
     (SELECT p.smsc_id, p.message_id, p.part_no FROM message_parts p
       WHERE p.link = $1 AND p.smsc_number = g.key
         AND p.accepted_at >= coalesce(g.submitted_after, '-infinity'::timestamptz) AND ${sentBeforeReceipt("g")}
       ORDER BY p.accepted_at DESC LIMIT 2)) s`;

/**
 * Receipts that matched no id exactly, matched as the same number written another way (hex or
 * decimal, any case, zero padding): each is renamed to the id of the one segment it names, and is
 * ambiguous when it names two or more. Only receipts whose id could be a number are looked up, and
 * only by the readings the ids show or the link has shown (`usable`): a decimal link's receipt is
 * never read as hex to reach another segment.
 */
export async function matchByNumber(
  tx: Queryable,
  link: string,
  receipts: readonly Receipt[],
  matching: Matching = { tolerant: true },
): Promise<{
  matched: { given: Receipt; receipt: Receipt }[];
  ambiguous: string[];
  relations: RelationCounts;
  shown: RelationCounts;
}> {
  const lookups: { key: string; i: number; submittedAfter: Date | null; receivedAt: Date | null }[] = [];
  const candidates = receipts.map((r) => numberCandidates(r.smscId).filter((c) => usable(c, matching)));
  candidates.forEach((list, i) => {
    for (const c of list)
      lookups.push({
        key: c.key,
        i,
        submittedAfter: receipts[i]?.submittedAfter ?? null,
        receivedAt: receipts[i]?.receivedAt ?? null,
      });
  });
  if (lookups.length === 0) return { matched: [], ambiguous: [], relations: {}, shown: {} };
  const { rows } = await tx.query<{ i: number; smsc_id: string; message_id: string; part_no: number }>({
    name: "shiri_segments_by_number",
    text: SEGMENTS_BY_NUMBER,
    values: [
      link,
      lookups.map((l) => l.key),
      lookups.map((l) => l.i),
      lookups.map((l) => l.submittedAfter),
      lookups.map((l) => l.receivedAt),
    ],
  });
  const found = new Map<number, Map<string, string>>();
  for (const row of rows) {
    const segments = found.get(row.i) ?? new Map<string, string>();
    segments.set(`${row.message_id}#${row.part_no}`, row.smsc_id);
    found.set(row.i, segments);
  }
  const matched: { given: Receipt; receipt: Receipt }[] = [];
  const ambiguous: string[] = [];
  const relations: RelationCounts = {};
  const shown: RelationCounts = {};
  for (const [i, segments] of found) {
    const given = receipts[i];
    if (!given) continue;
    if (segments.size > 1) {
      ambiguous.push(given.smscId);
      continue;
    }
    const smscId = [...segments.values()][0] as string;
    const candidate = candidates[i]?.find((c) => c.key === numberKey(smscId));
    const relation = candidate?.relation ?? "same_number";
    relations[relation] = (relations[relation] ?? 0) + 1;
    if (relation !== "same_number" && candidate?.shown) shown[relation] = (shown[relation] ?? 0) + 1;
    matched.push({ given, receipt: { ...given, smscId } });
  }
  return { matched, ambiguous: [...new Set(ambiguous)], relations, shown };
}

/**
 * Receipts matching no segment yet, with the number keys they may name one by on a tolerant link:
 * those the ids show, and apart, the cross-base guesses (matched only once the link has shown them).
 */
async function keepEarly(
  tx: Queryable,
  link: string,
  receipts: readonly Receipt[],
  matching: Matching,
): Promise<void> {
  const candidates = receipts.map((r) => (matching.tolerant ? numberCandidates(r.smscId) : []));
  const shownKeys = candidates.map((list) => list.filter((c) => c.shown).map((c) => c.key));
  const guess = (relation: CrossBaseRelation) =>
    candidates.map((list) => list.find((c) => !c.shown && c.relation === relation)?.key ?? null);
  await tx.query(
    `INSERT INTO early_receipts
       (link, smsc_id, state, err, whole_message, submitted_after, received_at, number_key, number_keys,
        hex_to_decimal_key, decimal_to_hex_key)
     SELECT $1::text, s, st, e, w, a, coalesce(r, now()), k[1], k, hd, dh
       FROM unnest($2::text[], $3::text[], $4::text[], $5::bool[], $6::timestamptz[], $7::timestamptz[], $8::text[],
                   $9::text[], $10::text[])
            AS u(s, st, e, w, a, r, kk, hd, dh)
      CROSS JOIN LATERAL (SELECT nullif(string_to_array(kk, ' '), '{}'::text[]) AS k) keys
     ON CONFLICT DO NOTHING`,
    [
      link,
      receipts.map((r) => r.smscId),
      receipts.map((r) => r.state),
      receipts.map((r) => r.err ?? null),
      receipts.map((r) => r.scope === "message"),
      receipts.map((r) => r.submittedAfter ?? null),
      receipts.map((r) => r.receivedAt ?? null),
      // Keys are hex digits: a space joins them into one array element per receipt.
      shownKeys.map((k) => k.join(" ")),
      guess("hex_to_decimal"),
      guess("decimal_to_hex"),
    ],
  );
  // The early-receipt sweep of every worker wakes at commit (see src/queue/wakeups.ts).
  await announceWork(tx, [EARLY_RECEIPTS_TOPIC]);
}

interface EarlyRow {
  smsc_id: string;
  state: string;
  err: string | null;
  whole_message: boolean;
  submitted_after: Date | null;
  received_at: Date;
}

function fromEarly(r: EarlyRow): Receipt {
  return {
    smscId: r.smsc_id,
    state: r.state,
    err: r.err,
    scope: r.whole_message ? "message" : "segment",
    receivedAt: r.received_at,
    ...(r.submitted_after ? { submittedAfter: r.submitted_after } : {}),
  };
}

/**
 * Applies the early receipts for these SMSC ids, whose segments have just been recorded: those
 * with the id itself and, on a tolerant link, those whose id is one of the number keys the id may
 * be written as. Those that still match nothing go back to wait out their grace.
 */
export async function applyEarlyReceipts(
  tx: Queryable,
  link: string,
  smscIds: readonly string[],
  matching: Matching = { tolerant: false },
): Promise<ApplyResult> {
  if (smscIds.length === 0) return { ...NOTHING };
  const keys = matching.tolerant
    ? [...new Set(smscIds.flatMap((id) => numberCandidates(id).map((c) => c.key)))]
    : [];
  const early = await tx.query<EarlyRow>({
    // Named: every dispatch batch runs it; the table holds only receipts still waiting for a segment.
    name: "shiri_take_early_receipts",
    text: `DELETE FROM early_receipts
            WHERE link = $1 AND (smsc_id = ANY($2::text[]) OR number_key = ANY($3::text[]))
           RETURNING smsc_id, state, err, whole_message, submitted_after, received_at`,
    values: [link, smscIds, keys],
  });
  if (early.rows.length === 0) return { ...NOTHING };
  return applyReceipts(tx, link, early.rows.map(fromEarly), matching);
}

/**
 * Applies early receipts whose segment has since been recorded (by any process, under the id or,
 * on a tolerant link, a number key of it; a cross-base guess only on the links `guessing` lists
 * for it), and drops those that stayed unmatched past the grace period. Returns how many were
 * applied, those dropped as unknown, and the results per link.
 */
export async function sweepEarlyReceipts(
  tx: Queryable,
  graceSeconds: number,
  matchingOf: (link: string) => Matching,
  guessing: Readonly<Record<CrossBaseRelation, readonly string[]>> = {
    hex_to_decimal: [],
    decimal_to_hex: [],
  },
): Promise<{
  applied: number;
  unknown: { link: string; smsc_id: string; state: string }[];
  results: { link: string; result: ApplyResult }[];
}> {
  // Each early receipt probes the segments' index (a LATERAL with LIMIT 1 is never turned into a
  // join): as a plain EXISTS, the planner, guessing hundreds of early receipts in a table it had
  // never analysed, hashed the whole of message_parts on every sweep to match one or none.
  const matched = await tx.query<EarlyRow & { link: string }>(
    `DELETE FROM early_receipts e
      USING (SELECT r.link, r.smsc_id, r.state FROM early_receipts r
              CROSS JOIN LATERAL (SELECT 1 FROM message_parts p
                                   WHERE p.link = r.link
                                     AND (p.smsc_id = r.smsc_id OR p.smsc_id = ANY(r.number_keys)
                                          OR p.smsc_number = ANY(r.number_keys)
                                          OR (r.link = ANY($1::text[])
                                              AND r.hex_to_decimal_key IN (p.smsc_id, p.smsc_number))
                                          OR (r.link = ANY($2::text[])
                                              AND r.decimal_to_hex_key IN (p.smsc_id, p.smsc_number)))
                                     AND p.accepted_at >= coalesce(r.submitted_after, '-infinity'::timestamptz)
                                     AND ${sentBeforeReceipt("r")}
                                   LIMIT 1) segment) found
      WHERE (e.link, e.smsc_id, e.state) = (found.link, found.smsc_id, found.state)
     RETURNING e.link, e.smsc_id, e.state, e.err, e.whole_message, e.submitted_after, e.received_at`,
    [guessing.hex_to_decimal, guessing.decimal_to_hex],
  );
  const byLink = new Map<string, Receipt[]>();
  for (const r of matched.rows) {
    const list = byLink.get(r.link) ?? [];
    list.push(fromEarly(r));
    byLink.set(r.link, list);
  }
  const results: { link: string; result: ApplyResult }[] = [];
  for (const [link, list] of byLink)
    results.push({ link, result: await applyReceipts(tx, link, list, matchingOf(link)) });
  const stale = await tx.query<{ link: string; smsc_id: string; state: string }>(
    `DELETE FROM early_receipts WHERE received_at < now() - make_interval(secs => $1)
     RETURNING link, smsc_id, state`,
    [graceSeconds],
  );
  return { applied: matched.rows.length, unknown: stale.rows, results };
}
