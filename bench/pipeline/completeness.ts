import type { Pool } from "../../src/db/pool.ts";
import { type AcceptedMessage, digits } from "../peers/load-protocol.ts";
import type { SinkCounts } from "../peers/smpp-sink.ts";
import type { WebhookReceiver } from "./webhook-receiver.ts";

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
}): Promise<{ problems: number; details: Record<string, number> }> {
  const { accepted, sink, receiver } = input;

  // Submits per destination, every part of it ("26377…#1").
  const submits = new Map<string, number[]>();
  for (const [key, n] of Object.entries(sink.per_destination_part)) {
    const destination = digits(key.slice(0, key.lastIndexOf("#")));
    const list = submits.get(destination) ?? [];
    list.push(n);
    submits.set(destination, list);
  }
  const expectedDestinations = new Set(accepted.map(([, to]) => digits(to)));
  let missingSubmits = 0;
  let duplicateSubmits = 0;
  for (const destination of expectedDestinations) {
    const parts = submits.get(destination);
    if (!parts) missingSubmits++;
    else for (const n of parts) duplicateSubmits += n - 1;
  }
  let unexpectedSubmits = 0;
  for (const [destination, parts] of submits)
    if (!expectedDestinations.has(destination)) unexpectedSubmits += parts.reduce((a, n) => a + n, 0);

  const expectedIds = new Set(accepted.map(([id]) => id));
  let missingCallbacks = 0;
  let duplicateCallbacks = 0;
  for (const id of expectedIds) {
    const times = receiver.delivered.get(id)?.length ?? 0;
    if (times === 0) missingCallbacks++;
    else duplicateCallbacks += times - 1;
  }
  let unexpectedCallbacks = 0;
  for (const [id, times] of receiver.delivered)
    if (!expectedIds.has(id) && !input.ignoredIds.has(id)) unexpectedCallbacks += times.length;

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
    missing_submits: missingSubmits,
    duplicate_submits: duplicateSubmits,
    unexpected_submits: unexpectedSubmits,
    missing_callbacks: missingCallbacks,
    duplicate_callbacks: duplicateCallbacks,
    unexpected_callbacks: unexpectedCallbacks,
    failed_messages: db.failed,
    bad_signatures: receiver.badSignatures,
    unreadable_callbacks: receiver.unreadable,
  };
  const problems = Object.values(counted).reduce((a, n) => a + n, 0);
  return {
    problems,
    details: {
      messages_planned: input.planned,
      messages_accepted: accepted.length,
      messages_in_database: db.messages,
      not_delivered_in_database: db.undelivered,
      sink_submits: sink.submits,
      sink_receipts_sent: sink.receipts_sent,
      sink_receipts_acknowledged: sink.receipts_acknowledged,
      callback_requests: receiver.requests,
      ...Object.fromEntries([...receiver.byType].map(([type, n]) => [`callbacks_${type}`, n])),
      ...counted,
    },
  };
}
