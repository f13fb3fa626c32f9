import type { RequestHandler } from "express";
import { z } from "zod";
import {
  listDeliveries,
  REDELIVER_RANGE_LIMIT,
  redeliverEvent,
  redeliverRange,
} from "../../webhooks/deliveries.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { parseBody, UUID_PATTERN } from "../validation.ts";

/**
 * The account's callback deliveries (an extension, Kit conventions): what became of recent
 * events, and redelivery of one event or of a time range, e.g. after a receiver's outage.
 */
const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 20;

const dateTime = () =>
  z
    .string({ error: (i) => (i.input === undefined ? "is required" : "must be an RFC 3339 date-time") })
    .refine((s) => z.iso.datetime({ offset: true }).safeParse(s).success, {
      message: "must be an RFC 3339 date-time",
      abort: true,
    })
    .transform((s) => new Date(s));

export const listDeliveriesQuery = z.object({
  limit: z
    .string({ error: `must be an integer from 1 to ${MAX_LIMIT}` })
    .refine((s) => /^\d{1,3}$/.test(s) && Number(s) >= 1 && Number(s) <= MAX_LIMIT, {
      message: `must be an integer from 1 to ${MAX_LIMIT}`,
    })
    .transform(Number)
    .optional(),
  state: z
    .enum(["pending", "delivered", "failed"], { error: "must be pending, delivered or failed" })
    .optional(),
  since: dateTime().optional(),
});

export const redeliverRangeBody = z
  .object({ since: dateTime(), until: dateTime() })
  .strict()
  // Only a range of two valid dates is compared (zod runs this even when a field failed).
  .refine((r) => !(r.since.getTime() >= r.until.getTime()), {
    path: ["until"],
    message: "must be after since",
  });

/** GET /api/v1/webhook/deliveries?limit=&state=&since= — newest first, at most 100. */
export function getDeliveries(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    // Unknown query parameters are ignored, as query strings often carry extras.
    const { limit, state, since } = parseBody(listDeliveriesQuery, {
      limit: req.query.limit,
      state: req.query.state,
      since: req.query.since,
    });
    const data = await listDeliveries(deps.pool, res.locals.accountId, {
      limit: limit ?? DEFAULT_LIMIT,
      state,
      since,
    });
    res.status(200).json({ status: "success", message: "", data });
  };
}

/** POST /api/v1/webhook/deliveries/{event_id}/redeliver — one new attempt now, whatever the state. */
export function redeliverOne(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const id = String(req.params.event_id);
    // An id that is not a UUID names no event: not found, like another account's event.
    if (!UUID_PATTERN.test(id)) throw new ApiError("notFound");
    const delivery = await redeliverEvent(deps.pool, res.locals.accountId, id);
    if (!delivery) throw new ApiError("notFound");
    deps.metrics.webhookRequeued.inc({ reason: "redeliver" });
    res.status(202).json({ status: "success", message: "redelivery scheduled", data: delivery });
  };
}

/** POST /api/v1/webhook/deliveries/redeliver {since, until} — every event created in [since, until). */
export function redeliverMany(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const range = parseBody(redeliverRangeBody, req.body);
    const count = await redeliverRange(deps.pool, res.locals.accountId, range);
    if (count === null)
      throw new ApiError("validation", [
        {
          field: "until",
          description: `the range holds more than ${REDELIVER_RANGE_LIMIT} events: split it`,
        },
      ]);
    deps.metrics.webhookRequeued.inc({ reason: "redeliver" }, count);
    res
      .status(202)
      .json({ status: "success", message: "redelivery scheduled", data: { redelivered: count } });
  };
}
