import type { Queryable } from "../db/pool.ts";
import { MESSAGE_STATUSES, type MessageStatus } from "./search-messages.ts";

/** A bulk send as GET /api/v1/sms/bulk/{bulk_id} shows it; amounts in ten-thousandths. */
export interface BulkSummary {
  bulk_id: string;
  sender_id: string;
  created_at: string;
  total: number;
  /** Held for the whole send at acceptance (the bulk response's charge). */
  charge: number;
  currency: string;
  status_counts: Record<MessageStatus, number>;
  /** Messages with delivered_at set: the carrier confirmed handset delivery. */
  delivered: number;
  /** Where the charge stands now: still held, captured (billed), released (refunded). */
  billing: { held: number; captured: number; released: number };
}

interface Row {
  id: string;
  sender_id: string;
  created_at: Date;
  total: number;
  charge: number;
  currency: string;
  created: number;
  enqueued: number;
  processing: number;
  success: number;
  failed: number;
  delivered: number;
  held: number;
  captured: number;
  released: number;
}

/** The account's bulk send with its messages counted; null when it has no such send. */
export async function bulkSummary(
  db: Queryable,
  accountId: string,
  bulkId: string,
): Promise<BulkSummary | null> {
  const { rows } = await db.query<Row>(
    `SELECT b.id, b.sender_id, b.created_at, b.total, b.charge, b.currency,
            count(*) FILTER (WHERE m.status = 'created')::int AS created,
            count(*) FILTER (WHERE m.status = 'enqueued')::int AS enqueued,
            count(*) FILTER (WHERE m.status = 'processing')::int AS processing,
            count(*) FILTER (WHERE m.status = 'success')::int AS success,
            count(*) FILTER (WHERE m.status = 'failed')::int AS failed,
            count(m.delivered_at)::int AS delivered,
            coalesce(sum(m.charge) FILTER (WHERE m.billing = 'held'), 0)::bigint AS held,
            coalesce(sum(m.charge) FILTER (WHERE m.billing = 'captured'), 0)::bigint AS captured,
            coalesce(sum(m.charge) FILTER (WHERE m.billing = 'released'), 0)::bigint AS released
       FROM bulk_sends b
       LEFT JOIN messages m ON m.bulk_id = b.id AND m.account_id = b.account_id
      WHERE b.id = $1 AND b.account_id = $2
      GROUP BY b.id`,
    [bulkId, accountId],
  );
  const row = rows[0];
  if (!row) return null;
  const status_counts = Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, row[s]])) as Record<
    MessageStatus,
    number
  >;
  return {
    bulk_id: row.id,
    sender_id: row.sender_id,
    created_at: row.created_at.toISOString(),
    total: row.total,
    charge: row.charge,
    currency: row.currency,
    status_counts,
    delivered: row.delivered,
    billing: { held: row.held, captured: row.captured, released: row.released },
  };
}
