import type { RequestHandler } from "express";
import { withTransaction } from "../../db/pool.ts";
import { CANCELLED, type CancelledMessage, cancelMessages } from "../../lifecycle/index.ts";
import type { Metrics } from "../../observability/metrics.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { MESSAGE_COLUMNS, type MessageRow, toMessageView } from "../message-view.ts";
import { UUID_PATTERN } from "../validation.ts";

/*
 * Cancelling (extensions, Kit conventions: new endpoints, not the contract's). A message still
 * waiting — scheduled and not yet due, or queued behind a carrier that is down — fails with
 * operator_response CANCELLED and its hold is released; one already dispatched or ended is a 409
 * and nothing changes. Cancelling again what is cancelled answers as the first time did (200), so
 * a client may repeat a request whose answer it lost. Another account's id is simply not found.
 */

const isCancelled = (m: { status: string; operator_response: string }) =>
  m.status === "failed" && m.operator_response === CANCELLED;

function countCancelled(metrics: Metrics, cancelled: readonly CancelledMessage[]): void {
  for (const m of cancelled) metrics.messagesCancelled.inc({ operator: m.operator });
}

/** DELETE /api/v1/sms/{id} → 200 with the Message as it now is (failed, CANCELLED). */
export function cancelSms(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const id = String(req.params.id);
    if (!UUID_PATTERN.test(id)) throw new ApiError("invalidSmsId");
    const accountId = res.locals.accountId;
    const { row, cancelled } = await withTransaction(deps.pool, async (tx) => {
      const cancelled = await cancelMessages(tx, accountId, { messageId: id });
      const { rows } = await tx.query<MessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1 AND account_id = $2`,
        [id, accountId],
      );
      return { row: rows[0], cancelled };
    });
    countCancelled(deps.metrics, cancelled);
    if (!row) throw new ApiError("notFound");
    if (!isCancelled(row)) throw new ApiError("notCancellable");
    res.status(200).json({ status: "success", message: "sms cancelled", data: toMessageView(row) });
  };
}

/**
 * DELETE /api/v1/sms/bulk/{bulk_id} → every message of the bulk send not yet dispatched is
 * cancelled, all their holds released in one transaction; 200 with the counts as they now are,
 * 409 when none of its messages is (or was) cancelled.
 */
export function cancelBulk(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const bulkId = String(req.params.bulk_id);
    if (!UUID_PATTERN.test(bulkId)) throw new ApiError("invalidBulkId");
    const accountId = res.locals.accountId;
    const result = await withTransaction(deps.pool, async (tx) => {
      const { rowCount } = await tx.query("SELECT 1 FROM bulk_sends WHERE id = $1 AND account_id = $2", [
        bulkId,
        accountId,
      ]);
      if (rowCount === 0) return null;
      const cancelled = await cancelMessages(tx, accountId, { bulkId });
      const { rows } = await tx.query<{ total: number; cancelled: number }>(
        `SELECT count(*)::int AS total,
                count(*) FILTER (WHERE status = 'failed' AND operator_response = $2)::int AS cancelled
           FROM messages WHERE bulk_id = $1`,
        [bulkId, CANCELLED],
      );
      return { cancelled, counts: rows[0] ?? { total: 0, cancelled: 0 } };
    });
    if (!result) throw new ApiError("notFound");
    countCancelled(deps.metrics, result.cancelled);
    const { total, cancelled } = result.counts;
    if (cancelled === 0) throw new ApiError("notCancellable");
    res.status(200).json({
      status: "success",
      message: "bulk sms cancelled",
      data: { bulk_id: bulkId, total, cancelled, not_cancelled: total - cancelled },
    });
  };
}
