import type { Pool } from "../../src/db/pool.ts";
import { type AcceptedMessage, digits } from "../peers/load-protocol.ts";
import type { SinkCounts } from "../peers/smpp-sink.ts";
import type { WebhookReceiver } from "./webhook-receiver.ts";

/** How far a run's submits or callbacks fall short of once per accepted message. */
export interface Shortfall {
  missing: number;
  duplicate: number;
  unexpected: number;
}

/**
 * The pure tally: every accepted message's destination submitted once (each part of it:
 * "26377…#1", "#2"), and its id called back once. Submits to other destinations and callbacks for
 * other ids (bar `ignoredIds`, the probe's) are unexpected. Used by checkCompleteness and by the
 * Kannel bench (bench/peers/kannel-bench.ts), whose ids are its recipients' digits.
 */
export function tallyShortfalls(input: {
  accepted: readonly AcceptedMessage[];
  /** The sink's submit_sm per "destination#part" (SinkCounts.per_destination_part). */
  perDestinationPart: Readonly<Record<string, number>>;
  /** Each id's callbacks (or delivery reports) received, one entry per arrival. */
  delivered: ReadonlyMap<string, readonly unknown[]>;
  ignoredIds?: ReadonlySet<string>;
}): { submits: Shortfall; callbacks: Shortfall } {
  const { accepted, delivered } = input;

  // Submits per destination, every part of it ("26377…#1").
  const submits = new Map<string, number[]>();
  for (const [key, n] of Object.entries(input.perDestinationPart)) {
    const destination = digits(key.slice(0, key.lastIndexOf("#")));
    const list = submits.get(destination) ?? [];
    list.push(n);
    submits.set(destination, list);
  }
  const expectedDestinations = new Set(accepted.map(([, to]) => digits(to)));
  const submitted: Shortfall = { missing: 0, duplicate: 0, unexpected: 0 };
  for (const destination of expectedDestinations) {
    const parts = submits.get(destination);
    if (!parts) submitted.missing++;
    else for (const n of parts) submitted.duplicate += n - 1;
  }
  for (const [destination, parts] of submits)
    if (!expectedDestinations.has(destination)) submitted.unexpected += parts.reduce((a, n) => a + n, 0);

  const expectedIds = new Set(accepted.map(([id]) => id));
  const calledBack: Shortfall = { missing: 0, duplicate: 0, unexpected: 0 };
  for (const id of expectedIds) {
    const times = delivered.get(id)?.length ?? 0;
    if (times === 0) calledBack.missing++;
    else calledBack.duplicate += times - 1;
  }
  for (const [id, times] of delivered)
    if (!expectedIds.has(id) && !input.ignoredIds?.has(id)) calledBack.unexpected += times.length;

  return { submits: submitted, callbacks: calledBack };
}

/**
 * How many "destination#part" the sink took more than once, whoever asked for them: each is a
 * second SMS on a handset, so any fails the run (bench/report/check.ts).
 */
export function numbersSubmittedTwice(perDestinationPart: Readonly<Record<string, number>>): number {
  return Object.values(perDestinationPart).filter((n) => n > 1).length;
}

/**
 * Did every accepted message reach the carrier exactly once and come back exactly once? Each
 * shortfall is a problem that fails the run: requests refused, destinations never submitted or
 * submitted twice, submits nobody asked for, callbacks missing or repeated, messages failed,
 * callbacks with a bad signature or an unreadable body.
 */
export async function checkCompleteness(input: {
  accepted: readonly AcceptedMessage[];
  planned: number;
  requestFailures: number;
  sink: SinkCounts;
  receiver: WebhookReceiver;
  /** Message ids sent before the measured run (the probe). */
  ignoredIds: ReadonlySet<string>;
  pool: Pool;
}): Promise<{ problems: number; numbersSubmittedTwice: number; details: Record<string, number> }> {
  const { accepted, sink, receiver } = input;
  const { submits, callbacks } = tallyShortfalls({
    accepted,
    perDestinationPart: sink.per_destination_part,
    delivered: receiver.delivered,
    ignoredIds: input.ignoredIds,
  });

  const { rows } = await input.pool.query<{ failed: number; undelivered: number; messages: number }>(
    `SELECT count(*) FILTER (WHERE status = 'failed')::int AS failed,
            count(*) FILTER (WHERE delivered_at IS NULL)::int AS undelivered,
            count(*)::int AS messages
       FROM messages WHERE NOT (id = ANY ($1::uuid[]))`,
    [[...input.ignoredIds]],
  );
  const db = rows[0] ?? { failed: 0, undelivered: 0, messages: 0 };

  const counted = {
    request_failures: input.requestFailures,
    missing_submits: submits.missing,
    duplicate_submits: submits.duplicate,
    unexpected_submits: submits.unexpected,
    missing_callbacks: callbacks.missing,
    duplicate_callbacks: callbacks.duplicate,
    unexpected_callbacks: callbacks.unexpected,
    failed_messages: db.failed,
    bad_signatures: receiver.badSignatures,
    unreadable_callbacks: receiver.unreadable,
  };
  const problems = Object.values(counted).reduce((a, n) => a + n, 0);
  const twice = numbersSubmittedTwice(sink.per_destination_part);
  return {
    problems,
    numbersSubmittedTwice: twice,
    details: {
      messages_planned: input.planned,
      messages_accepted: accepted.length,
      messages_in_database: db.messages,
      not_delivered_in_database: db.undelivered,
      sink_submits: sink.submits,
      numbers_submitted_twice: twice,
      sink_receipts_sent: sink.receipts_sent,
      sink_receipts_acknowledged: sink.receipts_acknowledged,
      callback_requests: receiver.requests,
      ...Object.fromEntries([...receiver.byType].map(([type, n]) => [`callbacks_${type}`, n])),
      ...counted,
    },
  };
}
