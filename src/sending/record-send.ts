import type { Operator } from "../../carriers/index.ts";
import type { Tx } from "../db/pool.ts";
import { internationalForm } from "../domain/numbers.ts";
import { type EventType, eventTypesWanted, recordMessageEvents } from "../events/events.ts";
import { capture, holdAndCommit } from "../ledger/ledger.ts";
import { enqueueDispatch, type Queue } from "../queue/boss.ts";
import { type PreparedSend, withOptOuts } from "./prepare-send.ts";

export class UnapprovedSenderError extends Error {}

/** A prepared send with where its callbacks go when it names no webhook of its own. */
export interface SendToRecord {
  send: PreparedSend;
  accountWebhookEvents: readonly EventType[];
  /**
   * Sent even to a number on the account's opt-out list: only the reply that confirms an opt-out
   * (src/inbound/replies.ts), which the number asked for by opting out.
   */
  ignoresOptOuts?: boolean;
}

/** What recording sends found: sends refused (by position), and messages to opted-out numbers. */
export interface RecordedSends {
  refused: ReadonlySet<number>;
  optedOut: ReadonlySet<string>;
}

/*
 * One statement for the sends' bulk rows and all their messages, each send's sender id checked
 * in it (an approved sender id, or an inbound number of the account): a send whose sender is not
 * approved writes nothing. The account's opt-out list is read here too, so the check costs the
 * send path no statement of its own: a message to a listed number is written failed with
 * OPTED_OUT, a charge of 0 and nothing held (billing captured: there is nothing to move), and its
 * bulk row's charge is what the others hold. A batch's messages carry their own text (body,
 * encoding, segments), the others their send's. Returns the sends that were written, by their
 * position, and the opted-out messages' ids.
 */
const INSERT_SENDS = `
  WITH s AS (
    SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[],
                         $8::text[], $9::text[], $10::timestamptz[], $11::int[], $12::bigint[], $21::timestamptz[],
                         $22::boolean[], $24::int[], $25::timestamptz[], $26::text[], $27::boolean[])
             AS s(send_no, bulk_id, sender, body, encoding, segments, currency, webhook_url, webhook_events,
                  received_at, total, charge, send_at, honours_opt_outs, validity_period, expires_at,
                  deliver_between, smart_encoded)
  ), approved AS (
    SELECT s.* FROM s
     WHERE EXISTS (SELECT 1 FROM sender_ids si
                    WHERE si.account_id = $13 AND si.address = s.sender AND si.verification_status = 'verified')
        OR EXISTS (SELECT 1 FROM inbound_numbers n WHERE n.number = s.sender AND n.account_id = $13)
  ), m AS (
    SELECT m.*, a.honours_opt_outs
                AND EXISTS (SELECT 1 FROM opt_outs o WHERE o.account_id = $13 AND o.number = m.number) AS opted_out
      FROM unnest($14::int[], $15::uuid[], $16::text[], $17::text[], $18::bigint[], $19::text[], $20::text[],
                  $23::text[], $28::text[], $29::text[], $30::int[], $31::boolean[])
           AS m(send_no, id, "to", operator, charge, status, response, number, body, encoding, segments,
                smart_encoded)
      JOIN approved a ON a.send_no = m.send_no
  ), bulk AS (
    INSERT INTO bulk_sends (id, account_id, sender_id, total, charge, currency, webhook_url, created_at)
    SELECT a.bulk_id, $13, a.sender, a.total,
           a.charge - COALESCE((SELECT sum(m.charge) FROM m WHERE m.send_no = a.send_no AND m.opted_out), 0),
           a.currency, a.webhook_url, a.received_at
      FROM approved a WHERE a.bulk_id IS NOT NULL
  ), messages AS (
    INSERT INTO messages (id, account_id, bulk_id, "to", body, sender_id, operator, encoding, segments,
                          charge, charge_currency, operator_response, status, billing, webhook_url,
                          webhook_events, received_at, created_at, send_at, validity_period, expires_at,
                          deliver_between, smart_encoded, ignores_opt_outs)
    SELECT m.id, $13, a.bulk_id, m.to, COALESCE(m.body, a.body), a.sender, m.operator,
           COALESCE(m.encoding, a.encoding), COALESCE(m.segments, a.segments),
           CASE WHEN m.opted_out THEN 0 ELSE m.charge END, a.currency,
           CASE WHEN m.opted_out THEN 'OPTED_OUT' ELSE m.response END, -- OPTED_OUT (prepare-send.ts)
           CASE WHEN m.opted_out THEN 'failed' ELSE m.status END,
           CASE WHEN m.opted_out THEN 'captured' ELSE 'held' END, a.webhook_url,
           CASE WHEN a.webhook_events IS NULL THEN NULL
                ELSE ARRAY(SELECT json_array_elements_text(a.webhook_events::json)) END,
           a.received_at, a.received_at, a.send_at, a.validity_period, a.expires_at, a.deliver_between::jsonb,
           NULLIF(COALESCE(m.smart_encoded, a.smart_encoded), false), NOT a.honours_opt_outs
      FROM m JOIN approved a ON a.send_no = m.send_no
    RETURNING 1
  )
  SELECT send_no, NULL::uuid AS opted_out FROM approved
  UNION ALL
  SELECT NULL, id FROM m WHERE opted_out`;

/**
 * Writes the sends of one account and commits them, in a fixed number of set-based statements
 * whatever the number of sends and recipients: the bulk rows and messages (which check each
 * send's sender id), their dispatch jobs, the callback events their webhooks want, then the holds
 * with one debit of the balance together with the COMMIT. Sends whose sender id is not approved
 * write nothing and come back in `refused`. Throws InsufficientBalanceError, leaving nothing
 * written, when the balance does not cover them all.
 */
export async function recordSends(
  tx: Tx,
  boss: Queue,
  accountId: string,
  sends: readonly SendToRecord[],
  options: {
    dispatchBatchSize: number;
    /** Runs before the COMMIT, told the opted-out messages (the idempotent send stores its answer then). */
    beforeCommit?: (optedOut: ReadonlySet<string>) => Promise<void>;
  },
): Promise<RecordedSends> {
  const perSend = {
    no: [] as number[],
    bulkId: [] as (string | null)[],
    sender: [] as string[],
    body: [] as string[],
    encoding: [] as string[],
    segments: [] as number[],
    currency: [] as string[],
    webhookUrl: [] as (string | null)[],
    webhookEvents: [] as (string | null)[],
    receivedAt: [] as Date[],
    sendAt: [] as (Date | null)[],
    total: [] as number[],
    charge: [] as number[],
    honoursOptOuts: [] as boolean[],
    validityPeriod: [] as (number | null)[],
    expiresAt: [] as (Date | null)[],
    deliverBetween: [] as (string | null)[],
    smartEncoded: [] as boolean[],
  };
  const perMessage = {
    no: [] as number[],
    id: [] as string[],
    to: [] as string[],
    operator: [] as string[],
    charge: [] as number[],
    status: [] as string[],
    response: [] as string[],
    number: [] as string[],
    // A batch message's own text; null for one that carries its send's body.
    body: [] as (string | null)[],
    encoding: [] as (string | null)[],
    segments: [] as (number | null)[],
    smartEncoded: [] as (boolean | null)[],
  };
  sends.forEach(({ send, ignoresOptOuts }, no) => {
    if (send.accountId !== accountId) throw new Error("recordSends takes the sends of one account");
    perSend.no.push(no);
    perSend.bulkId.push(send.bulkId);
    perSend.sender.push(send.from);
    perSend.body.push(send.body);
    perSend.encoding.push(send.encoding);
    perSend.segments.push(send.segments);
    perSend.currency.push(send.currency);
    perSend.webhookUrl.push(send.webhookUrl);
    perSend.webhookEvents.push(send.webhookEvents ? JSON.stringify(send.webhookEvents) : null);
    perSend.receivedAt.push(send.receivedAt);
    perSend.sendAt.push(send.sendAt);
    perSend.total.push(send.messages.length);
    perSend.charge.push(send.total);
    perSend.honoursOptOuts.push(ignoresOptOuts !== true);
    perSend.validityPeriod.push(send.validityPeriod);
    perSend.expiresAt.push(send.expiresAt);
    perSend.deliverBetween.push(send.deliverBetween ? JSON.stringify(send.deliverBetween) : null);
    perSend.smartEncoded.push(send.smartEncoded);
    for (const m of send.messages) {
      perMessage.no.push(no);
      perMessage.id.push(m.id);
      perMessage.to.push(m.to);
      perMessage.operator.push(m.operator ?? "");
      perMessage.charge.push(m.charge);
      perMessage.status.push(m.status);
      perMessage.response.push(m.operator_response);
      perMessage.number.push(internationalForm(m.to));
      perMessage.body.push(m.text?.body ?? null);
      perMessage.encoding.push(m.text?.encoding ?? null);
      perMessage.segments.push(m.text?.segments ?? null);
      perMessage.smartEncoded.push(m.text?.smartEncoded ?? null);
    }
  });
  const ownTexts = perMessage.body.some((body) => body !== null);
  const { rows } = await tx.query<{ send_no: number | null; opted_out: string | null }>({
    // Named: prepared once per connection, since every send runs it.
    name: "shiri_insert_sends",
    text: INSERT_SENDS,
    values: [
      perSend.no,
      perSend.bulkId,
      perSend.sender,
      perSend.body,
      perSend.encoding,
      perSend.segments,
      perSend.currency,
      perSend.webhookUrl,
      perSend.webhookEvents,
      perSend.receivedAt,
      perSend.total,
      perSend.charge,
      accountId,
      perMessage.no,
      perMessage.id,
      perMessage.to,
      perMessage.operator,
      perMessage.charge,
      perMessage.status,
      perMessage.response,
      perSend.sendAt,
      perSend.honoursOptOuts,
      perMessage.number,
      perSend.validityPeriod,
      perSend.expiresAt,
      perSend.deliverBetween,
      perSend.smartEncoded,
      // Sends without texts of their own (all but batches) pass none: unnest pads with NULLs, and a
      // 10,000-recipient bulk send ships no 40,000 NULLs.
      ownTexts ? perMessage.body : [],
      ownTexts ? perMessage.encoding : [],
      ownTexts ? perMessage.segments : [],
      ownTexts ? perMessage.smartEncoded : [],
    ],
  });
  const written = new Set<number>();
  const optedOut = new Set<string>();
  for (const r of rows)
    if (r.send_no !== null) written.add(r.send_no);
    else if (r.opted_out !== null) optedOut.add(r.opted_out);
  const refused = new Set(perSend.no.filter((no) => !written.has(no)));
  const accepted = sends
    .filter((_, no) => written.has(no))
    .map((item) => (optedOut.size > 0 ? { ...item, send: withOptOuts(item.send, optedOut) } : item));
  if (accepted.length === 0) return { refused, optedOut };

  // A scheduled send's jobs start at its send_at: no worker fetches them before they are due.
  const routable = new Map<number, { id: string; operator: Operator }[]>();
  const unroutable: string[] = [];
  const events = { enqueued: [] as string[], failed: [] as string[] };
  for (const { send, accountWebhookEvents } of accepted) {
    // Only the types the destination wants (the principal knows the account webhook's): a send
    // whose callbacks ask for delivery alone writes no event row here.
    const wanted = eventTypesWanted(send, accountWebhookEvents);
    const due = send.sendAt?.getTime() ?? 0;
    for (const m of send.messages) {
      if (optedOut.has(m.id)) {
        if (wanted.has("message.failed")) events.failed.push(m.id);
      } else if (m.operator) {
        const list = routable.get(due);
        if (list) list.push({ id: m.id, operator: m.operator });
        else routable.set(due, [{ id: m.id, operator: m.operator }]);
        if (wanted.has("message.enqueued")) events.enqueued.push(m.id);
      } else {
        unroutable.push(m.id);
        if (wanted.has("message.failed")) events.failed.push(m.id);
      }
    }
  }
  for (const [due, messages] of routable)
    await enqueueDispatch(boss, tx, messages, options.dispatchBatchSize, due === 0 ? 0 : new Date(due));
  await recordMessageEvents(tx, events.enqueued, "message.enqueued");
  await recordMessageEvents(tx, events.failed, "message.failed");
  // An unroutable number is billed as it is accepted: its share of the hold is a charge at once.
  if (unroutable.length > 0) await capture(tx, unroutable);
  await options.beforeCommit?.(optedOut);
  // Last, with the COMMIT: the debit takes the balance row lock, which the account's sends share.
  await holdAndCommit(
    tx,
    accountId,
    accepted.map(({ send }) => ({
      amount: send.total,
      messageId: send.bulkId ? null : (send.messages[0]?.id ?? null),
      bulkId: send.bulkId,
    })),
  );
  return { refused, optedOut };
}
