import type { RequestHandler } from "express";
import { z } from "zod";
import { MESSAGE_COLUMNS, type MessageRow } from "../../search/message-row.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { messageSchema, toMessageView } from "../message-view.ts";
import { kitEnvelope } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { UUID_PATTERN } from "../validation.ts";

/** GET /api/v1/sms/{id} — scoped to the key's account; another account's id is simply not found. */
export function getSms(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const id = String(req.params.id);
    if (!UUID_PATTERN.test(id)) throw new ApiError("invalidSmsId");
    const { rows } = await deps.pool.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1 AND account_id = $2`,
      [id, res.locals.accountId],
    );
    const row = rows[0];
    if (!row) throw new ApiError("smsNotFound");
    res.status(200).json({ status: "success", message: "request successful", data: toMessageView(row) });
  };
}

export const getSmsEndpoint = endpoint({
  method: "get",
  path: "/api/v1/sms/{id}",
  operationId: "getSms",
  summary: "Retrieve one SMS",
  description:
    "The message as it stands: poll it (not in a tight loop) and watch delivered_at, or use callbacks. " +
    "Another account's id is not found.",
  tag: "Messages",
  origin: "contract",
  errors: "legacy",
  request: { path: z.object({ id: z.uuid().meta({ description: "The id from a send or a bulk item." }) }) },
  responses: { 200: { description: "The Message.", body: kitEnvelope(messageSchema, "request successful") } },
  failures: ["invalidSmsId", "smsNotFound"],
});
