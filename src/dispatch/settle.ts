import type { Operator } from "../../carriers/index.ts";
import type { Tx } from "../db/pool.ts";
import { FINAL_STATES } from "../domain/receipt-states.ts";
import { storedNumberKey } from "../domain/smsc-id.ts";
import {
  type Delivery,
  giveUpLease,
  markAccepted,
  markRefused,
  OPTED_OUT_BEFORE_DISPATCH,
  optedOutAmong,
  refreshDelivery,
} from "../lifecycle/index.ts";
import { completeDispatchJobs, enqueueDispatch, type FetchedJob, type Queue } from "../queue/boss.ts";
import { applyReceipts } from "../receipts/apply-receipts.ts";
import { mostTelling } from "../receipts/held-receipts.ts";
import type { Receipt } from "../receipts/read-receipt.ts";

export interface DispatchOutcome {
  /** Segments the carrier accepted in this run, with their canonical SMSC ids. */
  acceptedParts: { messageId: string; partNo: number; smscId: string }[];
  /** Messages whose every segment is now accepted; `firstRun` when none was accepted before this run. */
  succeeded: { id: string; response: string; firstRun: boolean }[];
  /** Messages the carrier refused for good. */
  failed: { id: string; response: string; error: string }[];
  /**
   * Messages to try again later (throttled, timed out, connection lost, breaker open); not before
   * `notBeforeSeconds` when a late answer may still come for one of their segments; `unanswered`
   * when a segment's answer never came on a connection that stayed up, `maybeAtCarrier` when that
   * or a submit lost with its connection leaves the carrier perhaps holding it.
   */
  retry: {
    id: string;
    error: string;
    notBeforeSeconds?: number;
    unanswered?: boolean;
    maybeAtCarrier?: boolean;
    /** The carrier refused a segment with a status that may pass (counted: DISPATCH_MAX_REFUSALS). */
    refused?: boolean;
    /** The number in international form, as opt-outs hold it. */
    number: string;
  }[];
  /** Messages another run holds: looked at again once its hold has run out. */
  deferred: string[];
  /** Scheduled messages whose job came before their send_at: looked at again then. */
  notDue: { id: string; sendAt: Date }[];
}

export function emptyOutcome(): DispatchOutcome {
  return { acceptedParts: [], succeeded: [], failed: [], retry: [], deferred: [], notDue: [] };
}

/** Back-off before a message's next attempt: 1, 2, 4 … 60 s, with jitter so retries spread out. */
export function retryDelaySeconds(attempts: number): number {
  const base = Math.min(60, 2 ** Math.max(0, attempts - 1));
  return Math.ceil(base / 2 + (Math.random() * base) / 2);
}

/**
 * Records segments the link accepted, each with the receipt already in hand for it, if any, and
 * with its id's number key where that differs from the id (receipts that write the number another
 * way find it by that). A segment recorded before (a late answer, a run that raced) stays as it was.
 * `claimedAt`, when known (their batch's claim, on the database's clock: no submit of it went out
 * before), is recorded as `sent_after`, so a receipt kept aside since before then is never applied
 * to them (an id the SMSC reused).
 */
export async function recordParts(
  tx: Tx,
  link: string,
  parts: DispatchOutcome["acceptedParts"],
  receiptFor: ReadonlyMap<string, Receipt> = new Map(),
  claimedAt: Date | null = null,
): Promise<void> {
  if (parts.length === 0) return;
  const held = parts.map((p) => receiptFor.get(p.smscId));
  await tx.query({
    name: "shiri_settle_parts",
    text: `INSERT INTO message_parts
             (message_id, part_no, link, smsc_id, smsc_number, receipt_state, receipt_err, receipt_at, sent_after)
           SELECT m, p, $1, s, n, st, e, CASE WHEN st IS NULL THEN NULL ELSE now() END,
                  $8::timestamptz
             FROM unnest($2::uuid[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[])
                  AS u(m, p, s, n, st, e)
           ON CONFLICT (message_id, part_no) DO NOTHING`,
    values: [
      link,
      parts.map((p) => p.messageId),
      parts.map((p) => p.partNo),
      parts.map((p) => p.smscId),
      parts.map((p) => storedNumberKey(p.smscId)),
      held.map((r) => r?.state ?? null),
      held.map((r) => r?.err ?? null),
      claimedAt,
    ],
  });
}

/** Which operator's queue a dispatch batch came from, and the link that carried it. */
export interface Route {
  operator: Operator;
  link: string;
}

/**
 * Records one dispatch batch — the work of every job fetched together — in one transaction: the
 * accepted segments (with the receipts the batch already holds for them), each message's new
 * status with its money move (capture on success, release on failure, exactly once), the retries
 * as new delayed jobs, and the completion of all the batch's jobs in one statement. A crash
 * anywhere keeps all of it or none, and the jobs then run again from what was recorded.
 *
 * The status moves are fenced by the lease's owner; the accepted segments are not (the carrier
 * took them, whoever holds the message now). A message whose lease was taken over by another run
 * (this run outlived its lease unrenewed) is not moved: it is returned in `leaseLost` and looked at
 * again by a job after a lease's length, which finds it final or claims it from what was recorded.
 * Returns those, the delivery latency in seconds of each message it delivered, and the ids of
 * those it delivered as it accepted them.
 */
export async function settleBatch(
  tx: Tx,
  boss: Queue,
  route: Route,
  jobs: readonly FetchedJob[],
  outcome: DispatchOutcome,
  receipts: readonly Receipt[],
  options: { batchSize: number; lockSeconds: number; owner: string },
  /** Segments recorded before the settle, with the receipt state each was recorded with. */
  earlyRecorded: ReadonlyMap<string, string | null> = new Map(),
): Promise<{ delivered: Delivery[]; deliveredAtAcceptance: string[]; leaseLost: string[] }> {
  // A receipt for one segment is written with the segment; one that stands for the whole message
  // (a carrier that sends one per message) goes the ordinary way once every segment is recorded.
  const receiptFor = mostTelling(
    receipts.filter((r) => r.scope !== "message"),
    FINAL_STATES,
  );
  const { operator, link } = route;
  const wholeMessage = receipts.filter((r) => r.scope === "message");
  const parts = outcome.acceptedParts;
  await recordParts(tx, link, parts, receiptFor);
  // Segments recorded while the batch ran (parts-recorder.ts) carry the receipts that had come by
  // then; a receipt that came after, or says more, is applied to them now.
  const catchUp = [...receiptFor.values()].filter(
    (r) => earlyRecorded.has(r.smscId) && earlyRecorded.get(r.smscId) !== r.state,
  );
  if (catchUp.length > 0) await applyReceipts(tx, link, catchUp);

  const delivered: Delivery[] = [];
  const deliveredAtAcceptance: string[] = [];
  const leaseLost: string[] = [];
  if (outcome.succeeded.length > 0) {
    const partsOf = new Map<string, string[]>();
    for (const p of parts) {
      const list = partsOf.get(p.messageId);
      if (list) list.push(p.smscId);
      else partsOf.set(p.messageId, [p.smscId]);
    }
    const rows = await markAccepted(
      tx,
      outcome.succeeded.map((s) => ({
        id: s.id,
        response: s.response,
        delivered:
          s.firstRun &&
          (partsOf.get(s.id) ?? []).every((smscId) => receiptFor.get(smscId)?.state === "DELIVRD"),
      })),
      options.owner,
    );
    leaseLost.push(
      ...notIn(
        outcome.succeeded,
        rows.map((r) => r.id),
      ),
    );
    for (const row of rows)
      if (row.delivered) {
        deliveredAtAcceptance.push(row.id);
        delivered.push({ operator, seconds: 0 });
      }
    // The others are carried up from their segments' receipts, whichever way those came: held by
    // this batch, from an earlier run, or applied the ordinary way to a segment recorded while the
    // batch ran (when the message was not yet success). Delivered when every segment says so, else a
    // final state in operator_response.
    const reconcile = rows.filter((r) => !r.delivered).map((r) => r.id);
    delivered.push(...(await refreshDelivery(tx, reconcile)));
  }
  if (wholeMessage.length > 0) delivered.push(...(await applyReceipts(tx, link, wholeMessage)).delivered);

  // A number that opted out while its message was being handed over: refused, not tried again.
  // Not while an answer of its may still come (it is held until then): its next claim, which finds
  // the number on the list, fails it once a late acceptance is recorded, its hold captured.
  const optedOut = new Set(
    await optedOutAmong(
      tx,
      outcome.retry.filter((r) => !r.unanswered),
    ),
  );
  const refusals = [
    ...outcome.failed,
    ...outcome.retry
      .filter((r) => optedOut.has(r.id))
      .map((r) => ({
        id: r.id,
        response: OPTED_OUT_BEFORE_DISPATCH,
        error: "the number opted out while it was being sent",
      })),
  ];
  const refused = await markRefused(tx, refusals, options.owner);
  leaseLost.push(...notIn(refusals, refused));

  const retries = outcome.retry.filter((r) => !optedOut.has(r.id));
  if (retries.length > 0) {
    const rows = await giveUpLease(tx, retries, options.owner);
    leaseLost.push(
      ...notIn(
        retries,
        rows.map((r) => r.id),
      ),
    );
    const notBefore = new Map(retries.map((r) => [r.id, r.notBeforeSeconds ?? 0]));
    const byDelay = new Map<number, { id: string; operator: Operator }[]>();
    for (const r of rows) {
      const delay = Math.max(retryDelaySeconds(r.attempts), notBefore.get(r.id) ?? 0);
      byDelay.set(delay, [...(byDelay.get(delay) ?? []), { id: r.id, operator }]);
    }
    for (const [delay, messages] of byDelay)
      await enqueueDispatch(boss, tx, messages, options.batchSize, delay);
  }

  const deferred = [...outcome.deferred, ...leaseLost];
  if (deferred.length > 0) {
    const messages = deferred.map((id) => ({ id, operator }));
    await enqueueDispatch(boss, tx, messages, options.batchSize, options.lockSeconds);
  }

  for (const { id, sendAt } of outcome.notDue)
    await enqueueDispatch(boss, tx, [{ id, operator }], options.batchSize, sendAt);

  await completeDispatchJobs(boss, tx, operator, jobs);
  return { delivered, deliveredAtAcceptance, leaseLost };
}

/** The ids of `wanted` that are not among `moved`. */
function notIn(wanted: readonly { id: string }[], moved: readonly string[]): string[] {
  const done = new Set(moved);
  return wanted.filter((w) => !done.has(w.id)).map((w) => w.id);
}
