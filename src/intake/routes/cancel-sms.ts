import type { RequestHandler } from "express";
import { z } from "zod";
import { withTransaction, withTransactionPastDeadlocks } from "../../db/pool.ts";
import { CANCELLED, type CancelledMessage, cancelMessages } from "../../lifecycle/index.ts";
import type { Metrics } from "../../observability/metrics.ts";
import { MESSAGE_COLUMNS, type MessageRow } from "../../search/message-row.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { messageSchema, toMessageView } from "../message-view.ts";
import { kitEnvelope } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
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
    // A worker's claim locks the bulk's rows in the order its plan reads them: a deadlock with
    // it is tried again, and the second try finds those messages claimed (not cancelled).
    const result = await withTransactionPastDeadlocks(deps.pool, async (tx) => {
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
    } satisfies z.input<typeof cancelBulkResponse>);
  };
}

export const cancelSmsResponse = kitEnvelope(messageSchema, "sms cancelled");

export const cancelBulkResponse = kitEnvelope(
  z
    .object({
      bulk_id: z.uuid(),
      total: z.int().meta({ description: "The bulk send's messages." }),
      cancelled: z
        .int()
        .meta({ description: "Cancelled now or by an earlier request: their holds released." }),
      not_cancelled: z.int().meta({
        description: "Already dispatched, or ended otherwise (an unroutable number stays billed).",
      }),
    })
    .meta({ id: "BulkCancellation", description: "The counts as they stand after the request." }),
  "bulk sms cancelled",
);

const smsIdPath = z.object({ id: z.uuid().meta({ description: "The id from a send or a bulk item." }) });
const bulkIdPath = z.object({ bulk_id: z.uuid().meta({ description: "data.bulk_id of the bulk send." }) });

export const cancelSmsEndpoint = endpoint({
  method: "delete",
  path: "/api/v1/sms/{id}",
  operationId: "cancelSms",
  summary: "Cancel a message not yet dispatched",
  description:
    "A message still enqueued (scheduled and not yet due, or waiting behind a carrier that is down) " +
    "ends failed with operator_response CANCELLED and its hold is released, in one transaction. " +
    "Cancelling a cancelled message answers 200 again. Kit conventions, though GET on this path is legacy.",
  tag: "Messages",
  origin: "extension",
  errors: "kit",
  request: { path: smsIdPath },
  responses: {
    200: { description: "The Message as it now is: failed, CANCELLED.", body: cancelSmsResponse },
  },
  failures: ["invalidSmsId", "notFound", "notCancellable"],
});

export const cancelBulkEndpoint = endpoint({
  method: "delete",
  path: "/api/v1/sms/bulk/{bulk_id}",
  operationId: "cancelBulk",
  summary: "Cancel what is not yet dispatched of a bulk send",
  description:
    "Every message of the bulk send still enqueued is cancelled and all their holds released, in one " +
    "transaction; messages already dispatched or ended are left as they are. 409 when none of its " +
    "messages is (or was) cancelled.",
  tag: "Messages",
  origin: "extension",
  errors: "kit",
  request: { path: bulkIdPath },
  responses: { 200: { description: "The bulk send's counts after the request.", body: cancelBulkResponse } },
  failures: ["invalidBulkId", "notFound", "notCancellable"],
});
