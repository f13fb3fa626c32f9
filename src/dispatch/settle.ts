import type { Operator } from "../../carriers/index.ts";
import type { Tx } from "../db/pool.ts";
import { release } from "../ledger/ledger.ts";
import { completeDispatchJobs, enqueueDispatch, type FetchedJob, type Queue } from "../queue/boss.ts";
import { applyReceipts, refreshDelivery } from "../receipts/apply-receipts.ts";
import { mostTelling } from "../receipts/held-receipts.ts";
import { FINAL_STATES, type Receipt } from "../receipts/read-receipt.ts";
import { recordMessageEvents } from "../webhooks/events.ts";

export interface DispatchOutcome {
  /** Segments the carrier accepted in this run, with their canonical SMSC ids. */
  acceptedParts: { messageId: string; partNo: number; smscId: string }[];
  /** Messages whose every segment is now accepted; `firstRun` when none was accepted before this run. */
  succeeded: { id: string; response: string; firstRun: boolean }[];
  /** Messages the carrier refused for good. */
  failed: { id: string; response: string; error: string }[];
  /**
   * Messages to try again later (throttled, timed out, connection lost, breaker open); not before
   * `notBeforeSeconds` when a late answer may still come for one of their segments.
   */
  retry: { id: string; error: string; notBeforeSeconds?: number }[];
  /** Messages another run holds: looked at again once its hold has run out. */
  deferred: string[];
}

/** Back-off before a message's next attempt: 1, 2, 4 … 60 s, with jitter so retries spread out. */
export function retryDelaySeconds(attempts: number): number {
  const base = Math.min(60, 2 ** Math.max(0, attempts - 1));
  return Math.ceil(base / 2 + (Math.random() * base) / 2);
}

/*
 * processing → success, with the capture of the hold and its ledger row, in one statement. A
 * message whose segments were all accepted in this run with a DELIVRD receipt already in hand is
 * delivered in the same row version. `old` reads the billing before the update, so the capture
 * happens once per message whoever settles it.
 */
const MARK_SUCCEEDED = `
  WITH u AS (SELECT * FROM unnest($1::uuid[], $2::text[], $3::bool[]) AS u(id, response, delivered)),
  old AS (SELECT m.id, m.billing FROM messages m JOIN u ON u.id = m.id
           WHERE m.status = 'processing' FOR UPDATE OF m),
  moved AS (
    UPDATE messages m
       SET status = 'success', billing = CASE WHEN old.billing = 'held' THEN 'captured' ELSE m.billing END,
           operator_response = CASE WHEN u.delivered THEN 'DELIVRD' ELSE u.response END,
           accepted_at = now(), delivered_at = CASE WHEN u.delivered THEN now() END,
           locked_until = NULL, locked_by = NULL, last_error = NULL, updated_at = now()
      FROM u JOIN old ON old.id = u.id
     WHERE m.id = u.id
    RETURNING m.id, m.account_id, m.charge, old.billing AS old_billing, u.delivered
  ),
  captured AS (
    INSERT INTO ledger_entries (account_id, kind, amount, message_id)
    SELECT account_id, 'capture', charge, id FROM moved WHERE old_billing = 'held' AND charge > 0
  )
  SELECT id, delivered FROM moved`;

/**
 * Records segments the carrier accepted, each with the receipt already in hand for it, if any.
 * A segment recorded before (a late answer, a run that raced) stays as it was.
 */
export async function recordParts(
  tx: Tx,
  operator: Operator,
  parts: DispatchOutcome["acceptedParts"],
  receiptFor: ReadonlyMap<string, Receipt> = new Map(),
): Promise<void> {
  if (parts.length === 0) return;
  const held = parts.map((p) => receiptFor.get(p.smscId));
  await tx.query({
    name: "shiri_settle_parts",
    text: `INSERT INTO message_parts (message_id, part_no, operator, smsc_id, receipt_state, receipt_err, receipt_at)
           SELECT m, p, $1, s, st, e, CASE WHEN st IS NULL THEN NULL ELSE now() END
             FROM unnest($2::uuid[], $3::int[], $4::text[], $5::text[], $6::text[]) AS u(m, p, s, st, e)
           ON CONFLICT (message_id, part_no) DO NOTHING`,
    values: [
      operator,
      parts.map((p) => p.messageId),
      parts.map((p) => p.partNo),
      parts.map((p) => p.smscId),
      held.map((r) => r?.state ?? null),
      held.map((r) => r?.err ?? null),
    ],
  });
}

/**
 * Records one dispatch batch — the work of every job fetched together — in one transaction: the
 * accepted segments (with the receipts the batch already holds for them), each message's new
 * status with its money move (capture on success, release on failure, exactly once), the retries
 * as new delayed jobs, and the completion of all the batch's jobs in one statement. A crash
 * anywhere keeps all of it or none, and the jobs then run again from what was recorded.
 * Returns the delivery latency, in seconds, of each message it delivered.
 */
export async function settleBatch(
  tx: Tx,
  boss: Queue,
  operator: Operator,
  jobs: readonly FetchedJob[],
  outcome: DispatchOutcome,
  receipts: readonly Receipt[],
  options: { batchSize: number; lockSeconds: number; owner: string },
): Promise<number[]> {
  // A receipt for one segment is written with the segment; one that stands for the whole message
  // (a carrier that sends one per message) goes the ordinary way once every segment is recorded.
  const receiptFor = mostTelling(
    receipts.filter((r) => r.scope !== "message"),
    FINAL_STATES,
  );
  const wholeMessage = receipts.filter((r) => r.scope === "message");
  const parts = outcome.acceptedParts;
  await recordParts(tx, operator, parts, receiptFor);

  const delivered: number[] = [];
  if (outcome.succeeded.length > 0) {
    const partsOf = new Map<string, string[]>();
    for (const p of parts) {
      const list = partsOf.get(p.messageId);
      if (list) list.push(p.smscId);
      else partsOf.set(p.messageId, [p.smscId]);
    }
    const firstRun = new Map(outcome.succeeded.map((s) => [s.id, s.firstRun]));
    const deliveredNow = outcome.succeeded.map(
      (s) =>
        s.firstRun &&
        (partsOf.get(s.id) ?? []).every((smscId) => receiptFor.get(smscId)?.state === "DELIVRD"),
    );
    const { rows } = await tx.query<{ id: string; delivered: boolean }>({
      name: "shiri_settle_succeeded",
      text: MARK_SUCCEEDED,
      values: [outcome.succeeded.map((s) => s.id), outcome.succeeded.map((s) => s.response), deliveredNow],
    });
    await recordMessageEvents(
      tx,
      rows.map((r) => r.id),
      "message.success",
    );
    const deliveredIds = rows.filter((r) => r.delivered).map((r) => r.id);
    await recordMessageEvents(tx, deliveredIds, "message.delivered");
    for (const _ of deliveredIds) delivered.push(0);
    // Segments with receipts from before this run, or receipts other than DELIVRD: carried up the
    // ordinary way (delivered when every segment says so, else the final state in operator_response).
    const reconcile = rows
      .filter((r) => !r.delivered)
      .map((r) => r.id)
      .filter((id) => !firstRun.get(id) || (partsOf.get(id) ?? []).some((smscId) => receiptFor.has(smscId)));
    delivered.push(...(await refreshDelivery(tx, reconcile)));
  }
  if (wholeMessage.length > 0) delivered.push(...(await applyReceipts(tx, operator, wholeMessage)).delivered);

  if (outcome.failed.length > 0) {
    const { rows } = await tx.query<{ id: string }>(
      `UPDATE messages m SET status = 'failed', operator_response = u.response, last_error = u.error,
                             locked_until = NULL, locked_by = NULL, updated_at = now()
         FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(id, response, error)
        WHERE m.id = u.id AND m.status = 'processing'
       RETURNING m.id`,
      [
        outcome.failed.map((f) => f.id),
        outcome.failed.map((f) => f.response),
        outcome.failed.map((f) => f.error),
      ],
    );
    const ids = rows.map((r) => r.id);
    await release(tx, ids);
    await recordMessageEvents(tx, ids, "message.failed");
  }

  if (outcome.retry.length > 0) {
    const { rows } = await tx.query<{ id: string; attempts: number }>(
      // Only the lease's owner gives it up: a run whose lease ran out leaves the new owner's alone.
      `UPDATE messages m SET locked_until = NULL, locked_by = NULL, last_error = u.error, updated_at = now()
         FROM unnest($1::uuid[], $2::text[]) AS u(id, error)
        WHERE m.id = u.id AND m.status = 'processing' AND m.locked_by = $3
       RETURNING m.id, m.attempts`,
      [outcome.retry.map((r) => r.id), outcome.retry.map((r) => r.error), options.owner],
    );
    const notBefore = new Map(outcome.retry.map((r) => [r.id, r.notBeforeSeconds ?? 0]));
    const byDelay = new Map<number, { id: string; operator: Operator }[]>();
    for (const r of rows) {
      const delay = Math.max(retryDelaySeconds(r.attempts), notBefore.get(r.id) ?? 0);
      byDelay.set(delay, [...(byDelay.get(delay) ?? []), { id: r.id, operator }]);
    }
    for (const [delay, messages] of byDelay)
      await enqueueDispatch(boss, tx, messages, options.batchSize, delay);
  }

  if (outcome.deferred.length > 0) {
    const messages = outcome.deferred.map((id) => ({ id, operator }));
    await enqueueDispatch(boss, tx, messages, options.batchSize, options.lockSeconds);
  }

  await completeDispatchJobs(boss, tx, operator, jobs);
  return delivered;
}
