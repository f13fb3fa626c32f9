import type { DeliveryWindow } from "../domain/delivery-window.ts";

/*
 * A message as stored: the columns every reader of messages selects (search, export, the API's
 * answers). The API's rendering of it (toMessageView) is HTTP's and stays in src/intake; the row
 * lives here, below both, so search never imports the HTTP layer (docs/decisions/0010).
 */

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
  validity_period?: number | null;
  expires_at?: Date | null;
  deliver_between?: DeliveryWindow | null;
  smart_encoded?: boolean | null;
}

export const MESSAGE_COLUMNS = `id, "to", body, sender_id, operator, charge, charge_currency, operator_response,
  received_at, status, created_at, delivered_at, send_at, validity_period, expires_at, deliver_between, smart_encoded`;
