/*
 * The event outbox: the event types a webhook can ask for and the rows every stage that changes a
 * message writes in its own transaction. Below those stages (docs/decisions/0010); src/webhooks
 * reads the outbox and sends the callbacks.
 */
import { randomUUID } from "node:crypto";
import type { Queryable } from "../db/pool.ts";
import { announceWork, OUTBOX_TOPIC } from "../queue/wakeups.ts";

/**
 * Message events a sender can receive by webhook. "message.undelivered" is a final receipt
 * state other than DELIVRD (UNDELIV, EXPIRED, REJECTD...); the Message's operator_response
 * carries the state.
 */
export type MessageEventType =
  | "message.enqueued"
  | "message.success"
  | "message.failed"
  | "message.delivered"
  | "message.undelivered";

export const MESSAGE_EVENT_TYPES: readonly MessageEventType[] = [
  "message.enqueued",
  "message.success",
  "message.failed",
  "message.delivered",
  "message.undelivered",
];

/**
 * Events about the account rather than one of its sends: a message a handset sent to one of its
 * inbound numbers, and a number put on or taken off its opt-out list. They go to the account
 * webhook only (a send's webhook_url is about that send's messages).
 */
export type AccountEventType = "message.received" | "contact.opted_out" | "contact.opted_in";
export const ACCOUNT_EVENT_TYPES: readonly AccountEventType[] = [
  "message.received",
  "contact.opted_out",
  "contact.opted_in",
];

/** Every event type, as the account webhook's filter takes them (all when it names none). */
export type EventType = MessageEventType | AccountEventType;
export const EVENT_TYPES: readonly EventType[] = [...MESSAGE_EVENT_TYPES, ...ACCOUNT_EVENT_TYPES];

/**
 * The event types a send's messages announce at all: those its own webhook_url asks for (all
 * when it names none), else those of the account webhook (`accountWebhookEvents`, empty when
 * the account has none). Lets the send path skip events nobody wants without a query.
 */
export function eventTypesWanted(
  send: { webhookUrl: string | null; webhookEvents: readonly MessageEventType[] | null },
  accountWebhookEvents: readonly EventType[],
): ReadonlySet<EventType> {
  if (send.webhookUrl) return new Set(send.webhookEvents ?? MESSAGE_EVENT_TYPES);
  return new Set(accountWebhookEvents);
}

/** A timestamptz as JS toISOString() prints it: UTC, milliseconds (truncated, as pg's Date is), Z. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/*
 * One INSERT ... SELECT whatever the number of ids. The Message is built here exactly as
 * toMessageView (src/intake/message-view.ts) renders it, field for field and in the same order,
 * so the payload is the event's own snapshot: sending the callback never reads the message again
 * and the event shows the change it announces. The destination is fixed now too: the send's webhook_url
 * with the event types it asked for (webhook_events, NULL for all), else the account webhook with
 * its own (events, NULL for all). Messages whose destination does not want the type are skipped.
 * Named, so planned once per connection: the ids drive a join, whose generic plan probes the
 * messages' key for each id as the custom plans do (docs/decisions/0015-named-statements.md). The
 * ids must be distinct, or a message would get two events.
 */
const recordEvents = (enqueuedAt: "NULL" | "now()", returning: string) => `
  INSERT INTO webhook_events (id, account_id, message_id, type, url, payload, created_at, enqueued_at)
  SELECT e.event_id, e.account_id, e.id, $2, e.url,
         json_build_object(
           'id', e.event_id,
           'type', $2::text,
           'created_at', ${iso("now()")},
           'data', json_build_object(
             'id', e.id,
             'to', e."to",
             'message', e.body,
             'sender_id', e.sender_id,
             'operator', e.operator,
             'charge', e.charge::text,
             'charge_currency', e.charge_currency,
             'operator_response', e.operator_response,
             'received_at', ${iso("e.received_at")},
             'status', e.status,
             'created_at', ${iso("e.created_at")},
             'delivered_at', ${iso("e.delivered_at")}
           )
         ),
         now(), ${enqueuedAt}
    FROM (
      -- gen_random_uuid() in the select list of a subquery: evaluated once per message.
      SELECT gen_random_uuid() AS event_id, m.id, m.account_id, m."to", m.body, m.sender_id, m.operator,
             m.charge, m.charge_currency, m.operator_response, m.received_at, m.status, m.created_at,
             m.delivered_at, COALESCE(m.webhook_url, w.url) AS url
        FROM unnest($1::uuid[]) AS given(id)
        JOIN messages m ON m.id = given.id
        LEFT JOIN account_webhooks w ON w.account_id = m.account_id
       WHERE CASE WHEN m.webhook_url IS NOT NULL THEN m.webhook_events IS NULL OR $2 = ANY (m.webhook_events)
                  ELSE w.url IS NOT NULL AND (w.events IS NULL OR $2 = ANY (w.events)) END
    ) e
  ${returning}`;

/** Left to the relay: nothing comes back (on the send path, a bulk send's events are thousands). */
const RECORD_EVENTS = recordEvents("NULL", "");
/** Born carried by a job that the transaction's opener inserts: each event's id and destination. */
const RECORD_EVENTS_IN_JOBS = recordEvents("now()", "RETURNING id, url");

/** The events recorded in a transaction whose opener enqueues their jobs in it (see event-jobs.ts). */
const takenUpIn = new WeakMap<Queryable, RecordedEvent[]>();

export interface RecordedEvent {
  id: string;
  url: string;
}

/**
 * Runs `fn`, during which the events recorded in `tx` are born carried by a job (their
 * enqueued_at set, so the relay leaves them be) and gathered in `recorded`: the caller must insert
 * their jobs before the transaction commits.
 */
export async function takingUpEvents<T>(
  tx: Queryable,
  fn: () => Promise<T>,
): Promise<{ result: T; recorded: RecordedEvent[] }> {
  const recorded: RecordedEvent[] = [];
  takenUpIn.set(tx, recorded);
  try {
    return { result: await fn(), recorded };
  } finally {
    takenUpIn.delete(tx);
  }
}

/**
 * Records one event per message id, snapshotting the Message as GET /api/v1/sms/{id} shows it
 * now, for messages whose destination (the send's webhook_url, else the account webhook) wants
 * this type; a no-op for the others. Call it in the transaction of the status change, after the
 * change. Set-based: one statement whatever the count. The callback is sent later, off this path
 * (see src/webhooks/callbacks.ts): the relay puts the event in a job, or the transaction's opener
 * does (takingUpEvents).
 */
export async function recordMessageEvents(
  tx: Queryable,
  messageIds: readonly string[],
  type: MessageEventType,
): Promise<void> {
  if (messageIds.length === 0) return;
  const ids = [...new Set(messageIds)];
  const takenUp = takenUpIn.get(tx);
  if (!takenUp) {
    await tx.query({ name: "shiri_record_events", text: RECORD_EVENTS, values: [ids, type] });
    // Left to the relay: it is woken at commit (see src/queue/wakeups.ts).
    await announceWork(tx, [OUTBOX_TOPIC]);
    return;
  }
  const { rows } = await tx.query<RecordedEvent>({
    name: "shiri_record_events_in_jobs",
    text: RECORD_EVENTS_IN_JOBS,
    values: [ids, type],
  });
  takenUp.push(...rows);
}

/*
 * Events about the account, for its webhook if it has one that wants the type: the data is the
 * event's snapshot, made by the caller; the envelope is the message events' ({id, type,
 * created_at, data}).
 */
const recordAccountEventsSql = (enqueuedAt: "NULL" | "now()", returning: string) => `
  INSERT INTO webhook_events (id, account_id, message_id, type, url, payload, created_at, enqueued_at)
  SELECT e.id, e.account_id, e.subject_id, e.type, w.url,
         json_build_object('id', e.id, 'type', e.type, 'created_at', ${iso("now()")}, 'data', e.data::json),
         now(), ${enqueuedAt}
    FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[])
         AS e(id, account_id, subject_id, type, data)
    JOIN account_webhooks w ON w.account_id = e.account_id
   WHERE w.url IS NOT NULL AND (w.events IS NULL OR e.type = ANY (w.events))
  ${returning}`;
const RECORD_ACCOUNT_EVENTS = recordAccountEventsSql("NULL", "");
const RECORD_ACCOUNT_EVENTS_IN_JOBS = recordAccountEventsSql("now()", "RETURNING id, url");

export interface AccountEvent {
  accountId: string;
  type: AccountEventType;
  /** The inbound message it is about (message_id of the outbox), if any. */
  subjectId: string | null;
  /** The event's data, as the callback carries it. */
  data: object;
}

/**
 * Records account events for the accounts whose webhook wants them; a no-op for the others. One
 * statement whatever the count; callbacks as recordMessageEvents's.
 */
export async function recordAccountEvents(tx: Queryable, events: readonly AccountEvent[]): Promise<void> {
  if (events.length === 0) return;
  const values = [
    events.map(() => randomUUID()),
    events.map((e) => e.accountId),
    events.map((e) => e.subjectId),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.data)),
  ];
  const takenUp = takenUpIn.get(tx);
  if (!takenUp) {
    await tx.query(RECORD_ACCOUNT_EVENTS, values);
    await announceWork(tx, [OUTBOX_TOPIC]);
    return;
  }
  const { rows } = await tx.query<RecordedEvent>(RECORD_ACCOUNT_EVENTS_IN_JOBS, values);
  takenUp.push(...rows);
}
