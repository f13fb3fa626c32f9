import { z } from "zod";
import { OPERATORS } from "../../carriers/index.ts";
import type { DeliveryWindow } from "../domain/delivery-window.ts";
import type { MessageRow } from "../search/message-row.ts";
import { timestamp } from "./openapi/conventions.ts";

/** The Message resource exactly as the contract shows it (charge as a JSON string). */
export interface MessageView {
  id: string;
  to: string;
  message: string;
  sender_id: string;
  operator: string;
  charge: string;
  charge_currency: string;
  operator_response: string;
  received_at: string;
  status: string;
  created_at: string;
  delivered_at: string | null;
  /** Extension: when a scheduled message is due; present on scheduled messages only. */
  send_at?: string;
  /** Extension: the validity_period its send gave, in seconds. */
  validity_period?: number;
  /** Extension: when it fails if no carrier has accepted it, when it has an expiry of its own. */
  expires_at?: string;
  /** Extension: the delivery window in force for it. */
  deliver_between?: DeliveryWindow;
  /** Extension: true when look-alike characters were replaced (`message` is the text as sent). */
  smart_encoded?: true;
}

export function toMessageView(row: MessageRow): MessageView {
  return {
    id: row.id,
    to: row.to,
    message: row.body,
    sender_id: row.sender_id,
    operator: row.operator,
    charge: String(row.charge),
    charge_currency: row.charge_currency,
    operator_response: row.operator_response,
    received_at: row.received_at.toISOString(),
    status: row.status,
    created_at: row.created_at.toISOString(),
    delivered_at: row.delivered_at ? row.delivered_at.toISOString() : null,
    // Only on a scheduled message: the contract's Message stays exactly as it is for the others.
    ...(row.send_at ? { send_at: row.send_at.toISOString() } : {}),
    // Likewise the send options (issue 30): only on a message sent with them.
    ...(row.validity_period ? { validity_period: row.validity_period } : {}),
    ...(row.expires_at ? { expires_at: row.expires_at.toISOString() } : {}),
    ...(row.deliver_between ? { deliver_between: row.deliver_between } : {}),
    ...(row.smart_encoded ? { smart_encoded: true as const } : {}),
  };
}

/** A delivery window as answers show it (start and end HH:MM, an IANA time zone). */
const deliveryWindowView = z.object({ start: z.string(), end: z.string(), time_zone: z.string() }).meta({
  id: "DeliveryWindowView",
  description: "Local hours, end exclusive; an end before start spans midnight.",
});

/** The Message as the OpenAPI document describes it; a test holds real answers to it. */
export const messageSchema = z
  .object({
    id: z.uuid().meta({ description: "Message id; used in GET /api/v1/sms/{id}." }),
    to: z.string().meta({ description: "Recipient MSISDN, as sent (trimmed)." }),
    message: z.string().meta({ description: "Body as sent." }),
    sender_id: z.string().meta({ description: "The approved sender id the recipient saw (sent as `from`)." }),
    operator: z
      .enum([...OPERATORS, ""])
      .meta({ description: "Derived from the recipient MSISDN; empty for a number no operator serves." }),
    charge: z
      .string()
      .regex(/^\d+$/)
      .meta({
        description:
          "Amount billed, in ten-thousandths of charge_currency: a JSON string here (an integer in bulk).",
        examples: ["450"],
      }),
    charge_currency: z.string().meta({ description: "Currency code of charge.", examples: ["USD"] }),
    operator_response: z.string().meta({
      description:
        "Empty until dispatched; then the carrier's answer: ESME_ROK (accepted), DELIVRD, a final receipt's " +
        "state with its error code (UNDELIV err:001, EXPIRED err:027; the state alone when the receipt gave " +
        "no code: the state is the text before the first space), an SMPP status name (refused); or why it " +
        "was never sent: UNROUTABLE, OPTED_OUT (the number is on the account's opt-out list: never sent, " +
        "charge 0), CANCELLED, VALIDITY_EXPIRED, EXPIRED (not accepted within its validity_period), NO_ANSWER.",
    }),
    received_at: timestamp().meta({ description: "When the service accepted the message." }),
    status: z
      .enum(["created", "enqueued", "processing", "success", "failed"])
      .meta({ description: "success: the carrier accepted it; not the delivery signal." }),
    created_at: timestamp().meta({ description: "When the message record was created." }),
    delivered_at: timestamp()
      .nullable()
      .meta({ description: "null until the carrier confirms handset delivery: the only delivery signal." }),
    send_at: timestamp()
      .optional()
      .meta({
        description:
          "Extension: when a scheduled message is due, or when the delivery window it was accepted outside opens; " +
          "present on those messages only.",
      }),
    validity_period: z.int().optional().meta({
      description:
        "Extension: the validity_period its send gave, in seconds; present on those messages only.",
    }),
    expires_at: timestamp()
      .optional()
      .meta({
        description:
          "Extension: when it fails (EXPIRED) if no carrier has accepted it: present on a message with a " +
          "validity_period, or delayed by a delivery window (then VALIDITY_EXPIRED without a validity_period).",
      }),
    deliver_between: deliveryWindowView.optional().meta({
      description: "Extension: the delivery window in force for it; present on those messages only.",
    }),
    smart_encoded: z
      .literal(true)
      .optional()
      .meta({
        description:
          "Extension: look-alike characters were replaced by GSM-7 ones (message is the text as sent and " +
          "billed); present on those messages only.",
      }),
  })
  .meta({ id: "Message", description: "One message to one recipient." });
