import { randomUUID } from "node:crypto";
import type { Operator } from "../../carriers/index.ts";
import { type DeliveryWindow, nextOpening } from "../domain/delivery-window.ts";
import { newMessageId } from "../domain/message-id.ts";
import { resolveOperator } from "../domain/numbers.ts";
import { priceMessage } from "../domain/pricing.ts";
import { countSegments, type Encoding } from "../domain/segments.ts";
import type { MessageEventType } from "../events/events.ts";

/**
 * A send's validity_period bounds, in seconds: a minute to three days. The longest also bounds how
 * late a receipt may come (src/dispatch/link-worker.ts).
 */
export const VALIDITY_PERIOD_MIN = 60;
export const VALIDITY_PERIOD_MAX = 259_200;

/** The reason a message that no operator serves is failed at once, billed, never sent. */
export const UNROUTABLE = "UNROUTABLE";

/** The reason a message to a number on the account's opt-out list is failed at once, unbilled, never sent. */
export const OPTED_OUT = "OPTED_OUT";

export interface PreparedMessage {
  id: string;
  to: string;
  operator: Operator | null;
  charge: number;
  status: "enqueued" | "failed";
  operator_response: string;
  /** A batch message's own text; absent when the message carries the send's body. */
  text?: MessageText;
}

/** A text as sent, with what it costs a recipient in segments. */
export interface MessageText {
  body: string;
  encoding: Encoding;
  segments: number;
  /** Look-alike characters were replaced (src/domain/look-alikes.ts). */
  smartEncoded: boolean;
}

export interface PreparedSend {
  accountId: string;
  bulkId: string | null;
  from: string;
  /** The text of every message; "" for a batch, whose messages each carry their own. */
  body: string;
  /** For a batch: ucs2 when any message is, and the most segments any message has. */
  encoding: Encoding;
  segments: number;
  /** The body's look-alike characters were replaced. */
  smartEncoded: boolean;
  currency: string;
  webhookUrl: string | null;
  /** The event types webhookUrl wants; null for all. */
  webhookEvents: readonly MessageEventType[] | null;
  receivedAt: Date;
  /** When a scheduled send is due, or a delivery window opens; null to send at once. */
  sendAt: Date | null;
  /** The validity_period the send gave, in seconds; null for the configured one. */
  validityPeriod: number | null;
  /** When its messages fail if no carrier accepted them; null: due + the configured validity. */
  expiresAt: Date | null;
  /** The delivery window in force for the send, if any. */
  deliverBetween: DeliveryWindow | null;
  messages: PreparedMessage[];
  total: number;
}

/** A message's text: its own (a batch's) or the send's. */
export function textOf(send: PreparedSend, message: PreparedMessage): MessageText {
  return (
    message.text ?? {
      body: send.body,
      encoding: send.encoding,
      segments: send.segments,
      smartEncoded: send.smartEncoded,
    }
  );
}

/**
 * When the send goes and when it expires. A delivery window moves a message due outside it to the
 * window's next opening; its validity still counts from when it was due before the window (a window
 * never lengthens it), so a delayed message without a validity_period of its own gets the
 * configured one as an expiry. Whether the window opens before that expiry is the caller's check
 * (src/intake/send-options.ts windowProblem).
 */
export function scheduleOf(
  receivedAt: Date,
  input: {
    sendAt?: Date | null | undefined;
    validityPeriod?: number | null | undefined;
    deliverBetween?: DeliveryWindow | null | undefined;
    validityHours?: number | undefined;
  },
): { sendAt: Date | null; expiresAt: Date | null } {
  const requested = input.sendAt ?? null;
  const due = requested ?? receivedAt;
  const opening = input.deliverBetween ? nextOpening(input.deliverBetween, due) : due;
  const delayed = opening.getTime() > due.getTime();
  const validitySeconds = input.validityPeriod ?? (delayed ? (input.validityHours ?? 24) * 3600 : null);
  return {
    sendAt: delayed ? opening : requested,
    expiresAt: validitySeconds === null ? null : new Date(due.getTime() + validitySeconds * 1000),
  };
}

/**
 * Everything about a send that needs no database: ids, operator, segments and price of each
 * recipient, in request order; when it goes and when it expires. Done before the transaction so
 * the transaction stays short. `texts` makes it a batch: one text per recipient, in order.
 */
export function prepareSend(input: {
  accountId: string;
  currency: string;
  from: string;
  body: string;
  recipients: readonly string[];
  webhookUrl: string | null;
  webhookEvents: readonly MessageEventType[] | null;
  bulk: boolean;
  sendAt?: Date | null;
  /** The body's look-alikes were replaced (it is the text as sent). */
  smartEncoded?: boolean;
  /** A batch's texts as sent, one per recipient; `body` is then unused. */
  texts?: readonly { body: string; smartEncoded: boolean }[];
  validityPeriod?: number | null;
  deliverBetween?: DeliveryWindow | null;
  /** The configured validity (MESSAGE_VALIDITY_HOURS), for a message a window delays. */
  validityHours?: number;
}): PreparedSend {
  const { texts } = input;
  if (texts && texts.length !== input.recipients.length)
    throw new Error("a batch has one text per recipient");
  const own = texts?.map(
    ({ body, smartEncoded }): MessageText => ({ body, smartEncoded, ...countSegments(body) }),
  );
  const { encoding, segments } = own
    ? {
        encoding: own.some((t) => t.encoding === "ucs2") ? ("ucs2" as const) : ("gsm7" as const),
        segments: Math.max(1, ...own.map((t) => t.segments)),
      }
    : countSegments(input.body);
  const receivedAt = new Date();
  const receivedAtMs = receivedAt.getTime();
  // A price per operator and segment count: a bulk send prices once per operator.
  const prices = new Map<string, number>();
  let total = 0;
  const messages = input.recipients.map((raw, i): PreparedMessage => {
    const to = raw.trim();
    const operator = resolveOperator(to);
    const text = own?.[i];
    const count = text?.segments ?? segments;
    const key = `${operator}:${count}`;
    let charge = prices.get(key);
    if (charge === undefined) {
      charge = priceMessage(operator, count, input.currency);
      prices.set(key, charge);
    }
    total += charge;
    const id = newMessageId(receivedAtMs);
    const message: PreparedMessage = operator
      ? { id, to, operator, charge, status: "enqueued", operator_response: "" }
      : { id, to, operator, charge, status: "failed", operator_response: UNROUTABLE };
    if (text) message.text = text;
    return message;
  });
  return {
    accountId: input.accountId,
    bulkId: input.bulk ? randomUUID() : null,
    from: input.from,
    body: texts ? "" : input.body,
    encoding,
    segments,
    smartEncoded: texts ? false : input.smartEncoded === true,
    currency: input.currency,
    webhookUrl: input.webhookUrl,
    webhookEvents: input.webhookUrl ? input.webhookEvents : null,
    receivedAt,
    ...scheduleOf(receivedAt, input),
    validityPeriod: input.validityPeriod ?? null,
    deliverBetween: input.deliverBetween ?? null,
    messages,
    total,
  };
}

/**
 * The send as written, once the messages to numbers on the account's opt-out list are known:
 * those are failed with OPTED_OUT and a charge of 0, and the send's total is what the rest hold.
 */
export function withOptOuts(send: PreparedSend, optedOut: ReadonlySet<string>): PreparedSend {
  if (optedOut.size === 0 || !send.messages.some((m) => optedOut.has(m.id))) return send;
  let total = 0;
  const messages = send.messages.map((m): PreparedMessage => {
    if (!optedOut.has(m.id)) {
      total += m.charge;
      return m;
    }
    return { ...m, charge: 0, status: "failed", operator_response: OPTED_OUT };
  });
  return { ...send, messages, total };
}
