import { z } from "zod";

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
}

/** Columns as stored; the view renames and formats them. */
export interface MessageRow {
  id: string;
  to: string;
  body: string;
  sender_id: string;
  operator: string;
  charge: number;
  charge_currency: string;
  operator_response: string;
  received_at: Date;
  status: string;
  created_at: Date;
  delivered_at: Date | null;
  send_at: Date | null;
}

export const MESSAGE_COLUMNS = `id, "to", body, sender_id, operator, charge, charge_currency, operator_response,
  received_at, status, created_at, delivered_at, send_at`;

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
  };
}

/** The Message as a schema, for the API reference (the same fields as MessageView). */
export const messageViewSchema = z.object({
  id: z.uuid(),
  to: z.string(),
  message: z.string(),
  sender_id: z.string(),
  operator: z.string(),
  charge: z.string(),
  charge_currency: z.string(),
  operator_response: z.string(),
  received_at: z.iso.datetime(),
  status: z.enum(["created", "enqueued", "processing", "success", "failed"]),
  created_at: z.iso.datetime(),
  delivered_at: z.iso.datetime().nullable(),
}) satisfies z.ZodType<MessageView>;
