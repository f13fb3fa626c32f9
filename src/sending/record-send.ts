import type { PgBoss } from "pg-boss";
import type { Operator } from "../../carriers/index.ts";
import type { Tx } from "../db/pool.ts";
import { capture, holdAndCommit } from "../ledger/ledger.ts";
import { enqueueDispatch } from "../queue/boss.ts";
import { eventTypesWanted, type MessageEventType, recordMessageEvents } from "../webhooks/events.ts";
import type { PreparedSend } from "./prepare-send.ts";

export class UnapprovedSenderError extends Error {}

/**
 * Writes a prepared send and commits it, in set-based statements whatever the number of
 * recipients: the bulk row and the messages (one statement, which also checks the sender id),
 * their dispatch jobs, the callback events their webhook wants, then the hold on the balance
 * together with the COMMIT. Throws, leaving nothing written, when the sender id is not approved
 * (UnapprovedSenderError) or the balance does not cover the whole send (InsufficientBalanceError).
 */
export async function recordSend(
  tx: Tx,
  boss: PgBoss,
  send: PreparedSend,
  opts: { dispatchBatchSize: number; accountWebhookEvents: readonly MessageEventType[] },
): Promise<void> {
  const ids: string[] = [];
  const tos: string[] = [];
  const operators: string[] = [];
  const charges: number[] = [];
  const statuses: string[] = [];
  const responses: string[] = [];
  const routable: { id: string; operator: Operator }[] = [];
  const unroutable: string[] = [];
  for (const m of send.messages) {
    ids.push(m.id);
    tos.push(m.to);
    operators.push(m.operator ?? "");
    charges.push(m.charge);
    statuses.push(m.status);
    responses.push(m.operator_response);
    if (m.operator) routable.push({ id: m.id, operator: m.operator });
    else unroutable.push(m.id);
  }
  const { rows } = await tx.query<{ inserted: number }>({
    // Named: prepared once per connection, since every send runs it.
    name: "shiri_insert_send",
    text: `WITH sender AS (
       SELECT 1 FROM sender_ids WHERE account_id = $7 AND address = $10 AND verification_status = 'verified'
     ), bulk AS (
       INSERT INTO bulk_sends (id, account_id, sender_id, total, charge, currency, webhook_url, created_at)
       SELECT $8, $7, $10, $16, $17, $13, $14, $15 FROM sender WHERE $8::uuid IS NOT NULL
     ), inserted AS (
       INSERT INTO messages (id, account_id, bulk_id, "to", body, sender_id, operator, encoding, segments,
                             charge, charge_currency, operator_response, status, billing, webhook_url,
                             webhook_events, received_at, created_at)
       SELECT m.id, $7, $8, m.to, $9, $10, m.operator, $11, $12, m.charge, $13, m.response, m.status, 'held',
              $14, $18::text[], $15, $15
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[])
              AS m(id, "to", operator, charge, status, response)
        WHERE EXISTS (SELECT 1 FROM sender)
       RETURNING 1
     )
     SELECT count(*)::int AS inserted FROM inserted`,
    values: [
      ids,
      tos,
      operators,
      charges,
      statuses,
      responses,
      send.accountId,
      send.bulkId,
      send.body,
      send.from,
      send.encoding,
      send.segments,
      send.currency,
      send.webhookUrl,
      send.receivedAt,
      send.messages.length,
      send.total,
      send.webhookEvents,
    ],
  });
  if ((rows[0]?.inserted ?? 0) === 0) throw new UnapprovedSenderError();
  if (routable.length > 0) await enqueueDispatch(boss, tx, routable, opts.dispatchBatchSize);
  // Only the types the destination wants (the principal knows the account webhook's): a send
  // whose callbacks ask for delivery alone writes no event row here.
  const wanted = eventTypesWanted(send, opts.accountWebhookEvents);
  if (wanted.has("message.enqueued"))
    await recordMessageEvents(
      tx,
      routable.map((m) => m.id),
      "message.enqueued",
    );
  if (wanted.has("message.failed")) await recordMessageEvents(tx, unroutable, "message.failed");
  // An unroutable number is billed as it is accepted: its share of the hold is a charge at once.
  if (unroutable.length > 0) await capture(tx, unroutable);
  // Last, with the COMMIT: the hold takes the balance row lock, which one account's sends share.
  const ref = send.bulkId ? { bulkId: send.bulkId } : { messageId: send.messages[0]?.id };
  await holdAndCommit(tx, send.accountId, send.total, ref);
}
