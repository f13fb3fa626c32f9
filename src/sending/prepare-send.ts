import { randomUUID } from "node:crypto";
import type { Operator } from "../../carriers/index.ts";
import { newMessageId } from "../domain/message-id.ts";
import { resolveOperator } from "../domain/numbers.ts";
import { priceMessage } from "../domain/pricing.ts";
import { countSegments, type Encoding } from "../domain/segments.ts";
import type { MessageEventType } from "../webhooks/events.ts";

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
}

export interface PreparedSend {
  accountId: string;
  bulkId: string | null;
  from: string;
  body: string;
  encoding: Encoding;
  segments: number;
  currency: string;
  webhookUrl: string | null;
  /** The event types webhookUrl wants; null for all. */
  webhookEvents: readonly MessageEventType[] | null;
  receivedAt: Date;
  /** When a scheduled send is due; null to send at once. */
  sendAt: Date | null;
  messages: PreparedMessage[];
  total: number;
}

/**
 * Everything about a send that needs no database: ids, operator, segments and price of each
 * recipient, in request order. Done before the transaction so the transaction stays short.
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
}): PreparedSend {
  const { encoding, segments } = countSegments(input.body);
  const receivedAt = new Date();
  const receivedAtMs = receivedAt.getTime();
  const priceByOperator = new Map<Operator | null, number>();
  let total = 0;
  const messages = input.recipients.map((raw): PreparedMessage => {
    const to = raw.trim();
    const operator = resolveOperator(to);
    let charge = priceByOperator.get(operator);
    if (charge === undefined) {
      charge = priceMessage(operator, segments, input.currency);
      priceByOperator.set(operator, charge);
    }
    total += charge;
    const id = newMessageId(receivedAtMs);
    return operator
      ? { id, to, operator, charge, status: "enqueued", operator_response: "" }
      : { id, to, operator, charge, status: "failed", operator_response: UNROUTABLE };
  });
  return {
    accountId: input.accountId,
    bulkId: input.bulk ? randomUUID() : null,
    from: input.from,
    body: input.body,
    encoding,
    segments,
    currency: input.currency,
    webhookUrl: input.webhookUrl,
    webhookEvents: input.webhookUrl ? input.webhookEvents : null,
    receivedAt,
    sendAt: input.sendAt ?? null,
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
