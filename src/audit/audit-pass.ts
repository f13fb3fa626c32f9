import { type Pool, withTransaction } from "../db/pool.ts";
import { LEDGER_AVAILABLE, LEDGER_HELD } from "../ledger/ledger.ts";
import { openMark } from "../lifecycle/open-mark.ts";
import { every } from "../periodic.ts";

/**
 * The audit a worker runs by itself (`shiri_audit_problems{kind}`), cheap enough to run every few
 * minutes on a table of hundreds of millions of messages. `shiri audit` (audit.ts) reads every
 * ledger row, message and segment; this pass reads only what can have gone wrong lately, each
 * through an index, and counts each kind of problem up to COUNTED:
 *
 * - stuck_messages: messages not final `stuckMinutes` after they were due. Complete: no open
 *   message is older than the open-messages watermark (open-mark.ts), so it reads from there
 *   (messages_due_idx), like the held-balance sampler.
 * - holds_without_live_message: final messages still holding their charge, among those due within
 *   the validity period (+1 h): a message becomes final within its validity, so every such hold is
 *   seen by the passes while it is fresh.
 * - parts_without_receipts: accepted segments of messages due in the hour before the receipt
 *   deadline (`receiptHours` ago) that have no receipt: the segments that went overdue lately.
 * - balance_mismatches: the accounts whose ledger moved since the previous pass (ledger rows past
 *   the last id it saw, by primary key; at most ACCOUNTS_PER_PASS of them, the rest wait for their
 *   next ledger row): available recomputed from the account's ledger, held from its ledger against
 *   the charges its messages in the window above hold. An account's check reads its whole ledger
 *   (ledger_entries_account_idx): the one part whose cost grows with history.
 *
 * One process at a time across all workers (a transaction-scoped advisory lock, as the validity
 * sweeper and retention take), in one read-only snapshot, under PASS_TIMEOUT_MS.
 */
export const AUDIT_KINDS = [
  "balance_mismatches",
  "holds_without_live_message",
  "stuck_messages",
  "parts_without_receipts",
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

/** Any constant works; it only has to be the same in every process. */
const AUDIT_LOCK = 7_426_017;
/** Each kind is counted up to this many: enough to page on, and a count that cannot run away. */
export const COUNTED = 1_000;
const ACCOUNTS_PER_PASS = 200;
/** On a first pass, the accounts of this many of the latest ledger rows are checked. */
const FIRST_PASS_LEDGER_ROWS = 10_000;
const PASS_TIMEOUT_MS = 30_000;
/** The thresholds of `shiri audit`'s defaults. */
export const AUDIT_STUCK_MINUTES = 60;
export const AUDIT_RECEIPT_HOURS = 48;

export interface AuditPassOptions {
  stuckMinutes: number;
  receiptHours: number;
  validityHours: number;
  /** The last ledger id the previous pass saw (null: none yet). */
  afterLedgerId: string | null;
}

export interface AuditPassResult {
  problems: Record<AuditKind, number>;
  accountsChecked: number;
  /** The newest ledger id in this pass's snapshot: where the next pass starts. */
  lastLedgerId: string | null;
}

const capped = (inner: string) => `SELECT count(*)::int AS n FROM (${inner} LIMIT ${COUNTED}) s`;

const STUCK = capped(`
  SELECT 1 FROM messages
   WHERE COALESCE(send_at, received_at) >= $1
     AND COALESCE(send_at, received_at) < now() - $2::float8 * interval '1 minute'
     AND status IN ('created', 'enqueued', 'processing')`);

const ORPHAN_HOLDS = capped(`
  SELECT 1 FROM messages
   WHERE COALESCE(send_at, received_at) >= LEAST($1::timestamptz, now() - ($2::float8 + 1) * interval '1 hour')
     AND billing = 'held' AND status IN ('success', 'failed')`);

const OVERDUE_PARTS = capped(`
  SELECT 1 FROM messages m JOIN message_parts p ON p.message_id = m.id
   WHERE COALESCE(m.send_at, m.received_at) >= now() - ($1::float8 + 1) * interval '1 hour'
     AND COALESCE(m.send_at, m.received_at) < now() - $1::float8 * interval '1 hour'
     AND p.receipt_state IS NULL AND p.accepted_at < now() - $1::float8 * interval '1 hour'`);

const BALANCES = `
  WITH touched AS (
    SELECT DISTINCT account_id FROM ledger_entries WHERE id > $1 LIMIT $2
  ), held AS (
    SELECT account_id, sum(charge)::bigint AS held FROM messages
     WHERE COALESCE(send_at, received_at) >= LEAST($3::timestamptz, now() - ($4::float8 + 1) * interval '1 hour')
       AND billing = 'held' AND account_id IN (SELECT account_id FROM touched)
     GROUP BY account_id
  )
  SELECT count(*)::int AS accounts,
         count(*) FILTER (WHERE COALESCE(b.balance, 0) <> l.available OR COALESCE(h.held, 0) <> l.held)::int AS n
    FROM touched t
    LEFT JOIN account_balances b ON b.account_id = t.account_id
    LEFT JOIN held h ON h.account_id = t.account_id
   CROSS JOIN LATERAL (
     SELECT ${LEDGER_AVAILABLE} AS available, ${LEDGER_HELD} AS held
       FROM ledger_entries e WHERE e.account_id = t.account_id) l`;

/** One pass; null when another process holds the audit lock (it is auditing now). */
export function auditPass(pool: Pool, options: AuditPassOptions): Promise<AuditPassResult | null> {
  return withTransaction(pool, async (tx) => {
    await tx.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    await tx.query(`SET LOCAL statement_timeout = ${PASS_TIMEOUT_MS}`);
    const { rows: lock } = await tx.query<{ locked: boolean }>(
      "SELECT pg_try_advisory_xact_lock($1) AS locked",
      [AUDIT_LOCK],
    );
    if (!lock[0]?.locked) return null;
    const mark = await openMark(tx);
    const count = async (text: string, values: unknown[]) =>
      (await tx.query<{ n: number }>(text, values)).rows[0]?.n ?? 0;
    const { rows: last } = await tx.query<{ id: string | null }>(
      "SELECT max(id)::text AS id FROM ledger_entries",
    );
    const lastLedgerId = last[0]?.id ?? null;
    const after =
      options.afterLedgerId ??
      (lastLedgerId === null ? "0" : String(Math.max(0, Number(lastLedgerId) - FIRST_PASS_LEDGER_ROWS)));
    const { rows: balances } = await tx.query<{ accounts: number; n: number }>(BALANCES, [
      after,
      ACCOUNTS_PER_PASS,
      mark,
      options.validityHours,
    ]);
    return {
      problems: {
        balance_mismatches: balances[0]?.n ?? 0,
        holds_without_live_message: await count(ORPHAN_HOLDS, [mark, options.validityHours]),
        stuck_messages: await count(STUCK, [mark, options.stuckMinutes]),
        parts_without_receipts: await count(OVERDUE_PARTS, [options.receiptHours]),
      },
      accountsChecked: balances[0]?.accounts ?? 0,
      lastLedgerId: lastLedgerId ?? options.afterLedgerId,
    };
  });
}

/**
 * Runs a pass `firstPassMs` after start and then every `intervalMs`, never two at once; each
 * pass's counts go to `onPass` (the gauge). A pass that found the lock taken reports nothing: the
 * gauge keeps its last counts.
 */
export function keepAudited(
  pool: Pool,
  options: {
    intervalMs: number;
    firstPassMs: number;
    stuckMinutes: number;
    receiptHours: number;
    validityHours: number;
    onPass: (pass: AuditPassResult) => void;
    onError: (err: unknown) => void;
  },
): { stop(): Promise<void> } {
  let afterLedgerId: string | null = null;
  const pass = async () => {
    const result = await auditPass(pool, { ...options, afterLedgerId });
    if (!result) return;
    afterLedgerId = result.lastLedgerId;
    options.onPass(result);
  };
  return every(options.intervalMs, pass, options.onError, { firstMs: options.firstPassMs });
}
