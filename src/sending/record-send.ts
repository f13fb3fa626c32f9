import type { PgBoss } from "pg-boss";
import type { Operator } from "../../carriers/index.ts";
import { isApprovedSender } from "../accounts/sender-ids.ts";
import type { Tx } from "../db/pool.ts";
import { capture, hold } from "../ledger/ledger.ts";
import { enqueueDispatch } from "../queue/boss.ts";
import { recordMessageEvents } from "../webhooks/events.ts";
import type { PreparedSend } from "./prepare-send.ts";

export class UnapprovedSenderError extends Error {}
export class InsufficientBalanceError extends Error {}

/**
 * Writes a prepared send in the caller's transaction, in set-based statements whatever the
 * number of recipients: the messages, their dispatch jobs, then the hold on the balance. Throws
 * (and the caller rolls back, leaving nothing written) when the sender id is not approved or
 * the balance does not cover the whole send.
 */
export async function recordSend(
  tx: Tx,
  boss: PgBoss,
  send: PreparedSend,
  opts: { dispatchBatchSize: number },
): Promise<void> {
  if (!(await isApprovedSender(tx, send.accountId, send.from))) throw new UnapprovedSenderError();

  if (send.bulkId) {
    await tx.query(
      `INSERT INTO bulk_sends (id, account_id, sender_id, total, charge, currency, webhook_url, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        send.bulkId,
        send.accountId,
        send.from,
        send.messages.length,
        send.total,
        send.currency,
        send.webhookUrl,
        send.receivedAt,
      ],
    );
  }

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
  await tx.query(
    `INSERT INTO messages (id, account_id, bulk_id, "to", body, sender_id, operator, encoding, segments,
                           charge, charge_currency, operator_response, status, billing, webhook_url,
                           received_at, created_at)
     SELECT m.id, $7, $8, m.to, $9, $10, m.operator, $11, $12, m.charge, $13, m.response, m.status, 'held',
            $14, $15, $15
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[])
            AS m(id, "to", operator, charge, status, response)`,
    [
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
    ],
  );
  if (routable.length > 0) await enqueueDispatch(boss, tx, routable, opts.dispatchBatchSize);
  // Callbacks for the send, if it or its account has a webhook: outbox rows in this transaction.
  await recordMessageEvents(
    tx,
    routable.map((m) => m.id),
    "message.enqueued",
  );
  await recordMessageEvents(tx, unroutable, "message.failed");

  // Last: the hold takes the account row lock, held until commit, so it is kept short.
  const ref = send.bulkId ? { bulkId: send.bulkId } : { messageId: send.messages[0]?.id };
  if (!(await hold(tx, send.accountId, send.total, ref))) throw new InsufficientBalanceError();
  // An unroutable number is billed as it is accepted: its hold becomes a charge at once.
  if (unroutable.length > 0) await capture(tx, unroutable);
}
