import type { RequestHandler } from "express";
import { z } from "zod";
import { bulkSummary } from "../../search/bulk-summary.ts";
import { MESSAGE_STATUSES } from "../../search/search-messages.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { UUID_PATTERN } from "../validation.ts";

/** GET /api/v1/sms/bulk/{bulk_id} — a bulk send of the account, its messages counted (extension, Kit). */
export const getBulkResponse = z.object({
  status: z.literal("success"),
  message: z.string(),
  data: z.object({
    bulk_id: z.uuid(),
    sender_id: z.string(),
    created_at: z.iso.datetime(),
    total: z.int(),
    charge: z.int(),
    currency: z.string(),
    status_counts: z.object(Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, z.int()]))),
    delivered: z.int(),
    billing: z.object({ held: z.int(), captured: z.int(), released: z.int() }),
  }),
});

export function getBulk(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const id = String(req.params.bulk_id);
    // An id that is not a UUID names no bulk send: not found, like another account's.
    if (!UUID_PATTERN.test(id)) throw new ApiError("notFound");
    const summary = await bulkSummary(deps.pool, res.locals.accountId, id);
    if (!summary) throw new ApiError("notFound");
    res.status(200).json({ status: "success", message: "", data: summary });
  };
}

export const getBulkEndpoint = endpoint({
  method: "get",
  path: "/api/v1/sms/bulk/{bulk_id}",
  operationId: "getBulk",
  summary: "Retrieve a bulk send, its messages counted",
  description:
    "charge is what was held at acceptance; status_counts counts the messages by status, delivered " +
    "those with delivered_at; billing says where each message's charge stands now (held, captured, " +
    "released), amounts in ten-thousandths. An id that is not a UUID, or another account's, is not found.",
  tag: "Messages",
  origin: "extension",
  errors: "kit",
  request: { path: z.object({ bulk_id: z.uuid().meta({ description: "data.bulk_id of the bulk send." }) }) },
  responses: { 200: { description: "The bulk send.", body: getBulkResponse } },
  failures: ["notFound"],
});
