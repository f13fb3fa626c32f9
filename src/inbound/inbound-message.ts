import type { InboundEncoding } from "../smpp/data-coding.ts";
import type { KeywordKind } from "./keywords.ts";

/** An inbound message as GET /api/v1/inbound/{id} and the message.received callback show it. */
export interface InboundMessageView {
  id: string;
  from: string;
  to: string;
  message: string;
  operator: string;
  received_at: string;
  parts: number;
  complete: boolean;
  encoding: InboundEncoding;
  keyword: string | null;
}

/** An inbound message as stored (inbound_messages), before it is shown. */
export interface InboundMessage {
  id: string;
  accountId: string | null;
  link: string;
  operator: string;
  from: string;
  to: string;
  body: string;
  encoding: InboundEncoding;
  parts: number;
  complete: boolean;
  keyword: string | null;
  keywordKind: KeywordKind | null;
  reply: "pending" | null;
  receivedAt: Date;
}

export function toInboundView(m: InboundMessage): InboundMessageView {
  return {
    id: m.id,
    from: m.from,
    to: m.to,
    message: m.body,
    operator: m.operator,
    received_at: m.receivedAt.toISOString(),
    parts: m.parts,
    complete: m.complete,
    encoding: m.encoding,
    keyword: m.keyword,
  };
}
