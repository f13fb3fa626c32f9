import type { RequestHandler, Response } from "express";
import { z } from "zod";
import { EVENT_TYPES } from "../../events/events.ts";
import {
  listCallbackLog,
  REDELIVER_RANGE_LIMIT,
  type Redelivery,
  redeliverEvent,
  redeliverRange,
} from "../../webhooks/callback-log.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { kitEnvelope, timestamp } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { parseBody, UUID_PATTERN } from "../validation.ts";
import { queryOf } from "./search-sms.ts";

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
    .transform((s) => new Date(s))
    .meta({ format: "date-time", description: "RFC 3339, with Z or an offset" });

// Unknown parameters are refused, as on the other lists: a misspelt filter never returns everything.
export const listDeliveriesQuery = z
  .object({
    limit: z
      .string({ error: `must be an integer from 1 to ${MAX_LIMIT}` })
      .refine((s) => /^\d{1,3}$/.test(s) && Number(s) >= 1 && Number(s) <= MAX_LIMIT, {
        message: `must be an integer from 1 to ${MAX_LIMIT}`,
      })
      .transform(Number)
      .optional()
      .meta({
        type: "integer",
        minimum: 1,
        maximum: MAX_LIMIT,
        description: `${DEFAULT_LIMIT} when omitted`,
      }),
    state: z
      .enum(["pending", "delivered", "failed"], { error: "must be pending, delivered or failed" })
      .optional(),
    since: dateTime().optional().meta({ description: "events created then or later" }),
    before: z
      .string({ error: "must be an event id" })
      .regex(UUID_PATTERN, { message: "must be an event id" })
      .optional()
      .meta({
        format: "uuid",
        description: "the next page: events older than this one, the last of the previous page",
      }),
  })
  .strict();

export const redeliverRangeBody = z
  .object({ since: dateTime(), until: dateTime() })
  .strict()
  // Only a range of two valid dates is compared (zod runs this even when a field failed).
  .refine((r) => !(r.since.getTime() >= r.until.getTime()), {
    path: ["until"],
    message: "must be after since",
  });

const SCHEDULED = "redelivery scheduled";

/** GET /api/v1/webhook/deliveries?limit=&state=&since=&before= — newest first, at most 100. */
export function getDeliveries(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const { limit, state, since, before } = parseBody(listDeliveriesQuery, queryOf(req.query));
    const data = await listCallbackLog(deps.pool, res.locals.accountId, {
      limit: limit ?? DEFAULT_LIMIT,
      state,
      since,
      before,
    });
    if (data === null)
      throw new ApiError("validation", [
        { field: "before", description: "must be an event id of this account" },
      ]);
    res.status(200).json({ status: "success", message: "", data });
  };
}

/**
 * A redelivery's outcome as an answer: a 410-ended event is a 409, a redelivery past the account's
 * hourly budget a 429 with Retry-After (nothing redelivered), a range too large to take a 400.
 */
function answered<T>(deps: IntakeDeps, res: Response, outcome: Redelivery<T>): T {
  switch (outcome.kind) {
    case "redelivered":
      return outcome.data;
    case "notFound":
      throw new ApiError("notFound");
    case "refusedByReceiver":
      throw new ApiError("refusedByReceiver");
    case "overBudget":
      deps.metrics.rateLimited.inc({ scope: "redeliveries" });
      res.setHeader("Retry-After", String(outcome.retryAfterSeconds));
      throw new ApiError("tooManyRequests");
    case "tooMany":
      throw new ApiError("validation", [{ field: "until", description: tooManyText(outcome.limit) }]);
  }
}

const tooManyText = (limit: number) =>
  limit === REDELIVER_RANGE_LIMIT
    ? `the range holds more than ${limit} events: split it`
    : `the range holds more than ${limit} events, the hourly redelivery limit: split it`;

/**
 * POST /api/v1/webhook/deliveries/{event_id}/redeliver — one new attempt now, whatever the state,
 * unless a 410 ended it.
 */
export function redeliverOne(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const id = String(req.params.event_id);
    // An id that is not a UUID names no event: not found, like another account's event.
    if (!UUID_PATTERN.test(id)) throw new ApiError("notFound");
    const perHour = deps.config.WEBHOOK_REDELIVERIES_PER_HOUR;
    const delivery = answered(deps, res, await redeliverEvent(deps.pool, res.locals.accountId, id, perHour));
    deps.metrics.webhookRequeued.inc({ reason: "redeliver" });
    res.status(202).json({ status: "success", message: SCHEDULED, data: delivery });
  };
}

/** POST /api/v1/webhook/deliveries/redeliver {since, until} — every event created in [since, until). */
export function redeliverMany(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const range = parseBody(redeliverRangeBody, req.body);
    const perHour = deps.config.WEBHOOK_REDELIVERIES_PER_HOUR;
    const data = answered(deps, res, await redeliverRange(deps.pool, res.locals.accountId, range, perHour));
    deps.metrics.webhookRequeued.inc({ reason: "redeliver" }, data.redelivered);
    res.status(202).json({ status: "success", message: SCHEDULED, data });
  };
}

export const deliverySchema = z
  .object({
    id: z.uuid().meta({ description: "The event id (as in the callback)." }),
    type: z.enum(EVENT_TYPES as [string, ...string[]]),
    message_id: z
      .uuid()
      .nullable()
      .meta({
        description:
          "The message the event is about: a sent one, or for message.received and a keyword's contact " +
          "event the inbound one; null for a contact event made through the API.",
      }),
    url: z.string().meta({ description: "Where it goes: fixed when the event was recorded." }),
    state: z.enum(["pending", "delivered", "failed"]),
    attempts: z.int().nonnegative(),
    last_status: z.int().nullable().meta({ description: "The last attempt's HTTP status." }),
    last_error: z
      .string()
      .nullable()
      .meta({ description: "The last attempt's error, when it had no status." }),
    created_at: timestamp(),
    completed_at: timestamp().nullable(),
  })
  .meta({ id: "Delivery", description: "One callback event of the account and what became of it." });

const common = { tag: "Webhooks", origin: "extension", errors: "kit" } as const;

export const getDeliveriesEndpoint = endpoint({
  ...common,
  method: "get",
  path: "/api/v1/webhook/deliveries",
  operationId: "listWebhookDeliveries",
  summary: "Recent callback events and their outcome",
  description:
    "Newest first; an unknown parameter is a validation error, so a misspelt filter never returns everything. " +
    "The next page: the same query with `before` set to the last event's id.",
  request: { query: listDeliveriesQuery },
  responses: {
    200: { description: "The events (message is empty).", body: kitEnvelope(z.array(deliverySchema), "") },
  },
  failures: ["validation"],
});

export const redeliverOneEndpoint = endpoint({
  ...common,
  method: "post",
  path: "/api/v1/webhook/deliveries/{event_id}/redeliver",
  operationId: "redeliverWebhookEvent",
  summary: "Send one event again now",
  description:
    "Whatever its state; it keeps its id. An unknown id or another account's event is not found. An event " +
    "a 410 Gone ended (its own, or its URL's, which stops the account's callbacks to that URL until a PUT " +
    "/api/v1/webhook sets it again) is never sent again: 409. It counts against the account's hourly " +
    "redelivery budget (429 with Retry-After past it).",
  request: { path: z.object({ event_id: z.uuid() }) },
  responses: { 202: { description: "Back in the outbox.", body: kitEnvelope(deliverySchema, SCHEDULED) } },
  failures: ["notFound", "refusedByReceiver"],
});

export const redeliverManyEndpoint = endpoint({
  ...common,
  method: "post",
  path: "/api/v1/webhook/deliveries/redeliver",
  operationId: "redeliverWebhookEvents",
  summary: "Send every event of a time range again",
  description:
    `Every event created in [since, until), but those a 410 Gone ended and those bound for a URL a 410 ` +
    `stopped; more than ${REDELIVER_RANGE_LIMIT} (or than the hourly redelivery budget) is refused, to be ` +
    "split. The events count against the account's hourly redelivery budget: past it, 429 with Retry-After " +
    "and nothing redelivered.",
  request: { body: redeliverRangeBody },
  responses: {
    202: {
      description: "How many events went back to the outbox.",
      body: kitEnvelope(z.object({ redelivered: z.int().nonnegative() }), SCHEDULED),
    },
  },
  failures: ["validation"],
});
