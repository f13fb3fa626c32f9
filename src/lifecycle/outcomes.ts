import type { Tx } from "../db/pool.ts";
import { recordMessageEvents } from "../events/events.ts";
import { captureRows } from "../ledger/ledger.ts";
import { settleFailedHolds } from "./failed-holds.ts";

/*
 * The listed messages still processing under `owner`, each locked, with the list's columns and
 * the message's billing before the change. Each is looked up by its primary key from the list
 * (a lateral lookup), never found by joining the table with the list: judged by the rarity of
 * 'processing', the planner turned such a join into a scan of the whole table, or a nested loop
 * over the list for every row, per settle (200–450 ms for a batch of 1,000 over 30,000
 * messages).
 */
const ownProcessing = (list: string, columns: string, owner: string) => `
  SELECT u.*, held.billing FROM unnest(${list}) AS u(${columns})
   CROSS JOIN LATERAL (SELECT m.billing FROM messages m
                        WHERE m.id = u.id AND m.status = 'processing' AND m.locked_by = ${owner}
                        FOR NO KEY UPDATE) held`;

/*
 * processing → success, with the capture of the hold and the settle's capture row (one an
 * account, src/ledger/ledger.ts), in one statement. A message whose segments were all accepted in
 * this run with a DELIVRD receipt already in hand is delivered in the same row version. `old`
 * reads the billing before the update, so the capture happens once per message whoever settles
 * it. Only the lease's owner moves it ($4): the accepted segments themselves are recorded
 * unfenced (recordParts), so a run whose lease was taken over loses no acceptance; the message's
 * holder (or the job the settle schedules) moves it.
 */
const MARK_SUCCEEDED = `
  WITH old AS (${ownProcessing("$1::uuid[], $2::text[], $3::bool[]", "id, response, delivered", "$4")}),
  moved AS (
    UPDATE messages m
       SET status = 'success', billing = CASE WHEN old.billing = 'held' THEN 'captured' ELSE m.billing END,
           operator_response = CASE WHEN old.delivered THEN 'DELIVRD' ELSE old.response END,
           accepted_at = now(), delivered_at = CASE WHEN old.delivered THEN now() END,
           locked_until = NULL, locked_by = NULL, last_error = NULL, updated_at = now()
      FROM old
     WHERE m.id = old.id
    RETURNING m.id, m.account_id, m.charge, old.billing AS old_billing, old.delivered
  ),
  captured AS (${captureRows("(SELECT account_id, charge FROM moved WHERE old_billing = 'held') newly_captured")})
  SELECT id, delivered FROM moved`;

/**
 * processing → success: the carrier accepted every segment. The hold is captured (once, whoever
 * settles), message.success is recorded, and message.delivered too for a message delivered in the
 * same move (its DELIVRD receipts came with the batch). Only messages still processing and leased
 * to `owner` move: a run whose lease ran out and was taken by another leaves the message to it.
 */
export async function markAccepted(
  tx: Tx,
  items: readonly { id: string; response: string; delivered: boolean }[],
  owner: string,
): Promise<{ id: string; delivered: boolean }[]> {
  if (items.length === 0) return [];
  const { rows } = await tx.query<{ id: string; delivered: boolean }>({
    name: "shiri_settle_succeeded",
    text: MARK_SUCCEEDED,
    values: [items.map((i) => i.id), items.map((i) => i.response), items.map((i) => i.delivered), owner],
  });
  await recordMessageEvents(
    tx,
    rows.map((r) => r.id),
    "message.success",
  );
  await recordMessageEvents(
    tx,
    rows.filter((r) => r.delivered).map((r) => r.id),
    "message.delivered",
  );
  return rows;
}

/**
 * processing → failed: the carrier refused the message for good. The hold is released (once), or
 * captured when the carrier took a segment of it, and message.failed recorded. Only messages still
 * processing and leased to `owner` move: a run whose lease was taken over must not fail a message
 * its new holder may be getting accepted.
 */
export async function markRefused(
  tx: Tx,
  items: readonly { id: string; response: string; error: string }[],
  owner: string,
): Promise<string[]> {
  if (items.length === 0) return [];
  const { rows } = await tx.query<{ id: string }>(
    `WITH mine AS (${ownProcessing("$1::uuid[], $2::text[], $3::text[]", "id, response, error", "$4")})
     UPDATE messages m SET status = 'failed', operator_response = mine.response, last_error = mine.error,
                           locked_until = NULL, locked_by = NULL, updated_at = now()
       FROM mine WHERE m.id = mine.id
     RETURNING m.id`,
    [items.map((i) => i.id), items.map((i) => i.response), items.map((i) => i.error), owner],
  );
  const ids = rows.map((r) => r.id);
  await settleFailedHolds(tx, ids);
  await recordMessageEvents(tx, ids, "message.failed");
  return ids;
}

/**
 * processing stays processing, its lease given up for a later try (no money, no event). Only the
 * lease's owner gives it up: a run whose lease ran out leaves the new owner's alone. A message the
 * carrier may still answer a timed-out submit of (`notBeforeSeconds`) stays out of the expiry's,
 * the cancel's and the claim's reach until then: the late answer may record a segment the handset
 * has, which they must see.
 */
export async function giveUpLease(
  tx: Tx,
  items: readonly {
    id: string;
    error: string;
    unanswered?: boolean;
    maybeAtCarrier?: boolean;
    refused?: boolean;
    notBeforeSeconds?: number;
  }[],
  owner: string,
): Promise<{ id: string; attempts: number }[]> {
  if (items.length === 0) return [];
  const { rows } = await tx.query<{ id: string; attempts: number }>(
    `WITH mine AS (${ownProcessing("$1::uuid[], $2::text[], $3::bool[], $4::bool[], $5::bool[], $7::float8[]", "id, error, unanswered, maybe_at_carrier, refused, not_before", "$6")})
     UPDATE messages m SET locked_until = CASE WHEN mine.not_before > 0 THEN now() + make_interval(secs => mine.not_before) END,
                           locked_by = NULL, last_error = mine.error, updated_at = now(),
                           unanswered = m.unanswered + mine.unanswered::int,
                           refusals = m.refusals + mine.refused::int,
                           maybe_at_carrier = m.maybe_at_carrier OR mine.maybe_at_carrier
       FROM mine WHERE m.id = mine.id
     RETURNING m.id, m.attempts`,
    [
      items.map((i) => i.id),
      items.map((i) => i.error),
      items.map((i) => i.unanswered === true),
      items.map((i) => i.maybeAtCarrier === true),
      items.map((i) => i.refused === true),
      owner,
      items.map((i) => i.notBeforeSeconds ?? 0),
    ],
  );
  return rows;
}
