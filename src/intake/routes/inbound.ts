import type { RequestHandler } from "express";
import { z } from "zod";
import { internationalForm } from "../../domain/numbers.ts";
import { listInboundNumbers } from "../../inbound/inbound-numbers.ts";
import { findInbound, inboundScope, searchInbound } from "../../inbound/search-inbound.ts";
import { cursorKey, readCursor, signCursor } from "../../search/cursor.ts";
import { INBOUND_ENCODINGS } from "../../smpp/data-coding.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { kitEnvelope, timestamp } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { msisdnField, parseBody, UUID_PATTERN } from "../validation.ts";
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, queryOf, sinceBeforeUntil } from "./search-sms.ts";

/**
 * Two-way messaging (extensions, Kit conventions): the account's inbound numbers, and the
 * messages handsets sent to them, newest first, a page at a time.
 */

const NUMBER_FORMS = "international form: digits with the country code (+263…, 263… and 0… are one number)";

export const inboundMessageSchema = z
  .object({
    id: z.uuid(),
    from: z.string().meta({ description: `The handset's number, in ${NUMBER_FORMS}.` }),
    to: z.string().meta({
      description: "The inbound number written to (a short code, or a number in international form).",
    }),
    message: z.string().meta({ description: "The text, its parts joined." }),
    operator: z.string().meta({
      description: "The operator of the sender's number: econet, netone, telecel, or empty for none of them.",
    }),
    received_at: timestamp().meta({ description: "When its first part arrived." }),
    parts: z.int().positive().meta({ description: "The parts joined." }),
    complete: z.boolean().meta({
      description: "false when parts were still missing after the reassembly timeout: the text is what came.",
    }),
    encoding: z
      .enum(INBOUND_ENCODINGS)
      .meta({ description: "How the handset encoded it (data_coding 0, 1, 3 or 8)." }),
    keyword: z.string().nullable().meta({
      description:
        "The keyword the whole text matched (an opt-out, opt-in or help word of the account, upper case), else null.",
    }),
  })
  .meta({
    id: "InboundMessage",
    description: "A message a handset sent to one of the account's inbound numbers.",
  });

export const inboundNumberSchema = z
  .object({
    number: z
      .string()
      .meta({ description: "As `from` takes it: a short code, or digits with the country code." }),
    created_at: timestamp(),
  })
  .meta({ id: "InboundNumber" });

const queryDateTime = (description: string) =>
  z
    .string({ error: "must be an RFC 3339 date-time" })
    .refine((s) => z.iso.datetime({ offset: true }).safeParse(s).success, {
      message: "must be an RFC 3339 date-time",
      abort: true,
    })
    .meta({ format: "date-time", description })
    .transform((s) => new Date(s));

export const searchInboundQuery = z
  .object({
    from: msisdnField()
      .optional()
      .meta({ description: `Messages from this number (${NUMBER_FORMS}).` }),
    to: msisdnField().optional().meta({ description: "Messages to this inbound number." }),
    since: queryDateTime("Messages received at or after this instant (RFC 3339).").optional(),
    until: queryDateTime("Messages received before this instant (RFC 3339).").optional(),
    limit: z
      .string({ error: `must be an integer from 1 to ${MAX_SEARCH_LIMIT}` })
      .refine((s) => /^\d{1,3}$/.test(s) && Number(s) >= 1 && Number(s) <= MAX_SEARCH_LIMIT, {
        message: `must be an integer from 1 to ${MAX_SEARCH_LIMIT}`,
      })
      .meta({
        pattern: "^\\d{1,3}$",
        description: `Messages per page, 1 to ${MAX_SEARCH_LIMIT} (default ${DEFAULT_SEARCH_LIMIT}).`,
      })
      .transform(Number)
      .optional(),
    cursor: z
      .string({ error: "must be a cursor from next_cursor" })
      .meta({ description: "next_cursor of the previous page, with the same filters." })
      .optional(),
  })
  .strict()
  .superRefine(sinceBeforeUntil);

export const searchInboundResponse = kitEnvelope(
  z.object({
    items: z.array(inboundMessageSchema),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as cursor for the next page; null on the last." }),
  }),
  "",
);

/** GET /api/v1/inbound — the account's inbound messages, newest first, filtered, paged. */
export function searchInboundMessages(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const q = parseBody(searchInboundQuery, queryOf(req.query));
    const accountId = res.locals.accountId;
    const filters = {
      from: q.from === undefined ? undefined : internationalForm(q.from),
      to: q.to === undefined ? undefined : internationalForm(q.to),
      since: q.since,
      until: q.until,
    };
    const key = await cursorKey(deps.pool);
    const scope = inboundScope(accountId, filters);
    const after = q.cursor === undefined ? null : readCursor(key, scope, q.cursor);
    if (q.cursor !== undefined && after === null)
      throw new ApiError("validation", [
        { field: "cursor", description: "is not a cursor issued for this account and these filters" },
      ]);
    const page = await searchInbound(deps.pool, accountId, filters, {
      limit: q.limit ?? DEFAULT_SEARCH_LIMIT,
      after,
    });
    res.status(200).json({
      status: "success",
      message: "",
      data: {
        items: page.messages.map(({ link: _, ...message }) => message),
        next_cursor: page.next ? signCursor(key, scope, page.next) : null,
      },
    });
  };
}

/** GET /api/v1/inbound/{id} — one of the account's inbound messages. */
export function getInboundMessage(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const id = String(req.params.id);
    // An id that is not a UUID names no message: not found, like another account's.
    if (!UUID_PATTERN.test(id)) throw new ApiError("notFound");
    const message = await findInbound(deps.pool, res.locals.accountId, id);
    if (!message) throw new ApiError("notFound");
    res.status(200).json({ status: "success", message: "request successful", data: message });
  };
}

/** GET /api/v1/inbound-numbers — the short codes and numbers whose messages come to the account. */
export function getInboundNumbers(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    const data = await listInboundNumbers(deps.pool, res.locals.accountId);
    res.status(200).json({ status: "success", message: "request successful", data });
  };
}

const common = { tag: "Inbound", origin: "extension", errors: "kit" } as const;

export const searchInboundEndpoint = endpoint({
  ...common,
  method: "get",
  path: "/api/v1/inbound",
  operationId: "listInboundMessages",
  summary: "The account's inbound messages",
  description:
    "Newest first (by when the first part arrived), a page at a time: pass next_cursor back as cursor, with " +
    "the same filters, until it is null. Every filter is optional and given once; since is inclusive, until " +
    "exclusive; an unknown parameter is a validation error.",
  request: { query: searchInboundQuery },
  responses: { 200: { description: "A page of inbound messages.", body: searchInboundResponse } },
  failures: ["validation"],
});

export const getInboundEndpoint = endpoint({
  ...common,
  method: "get",
  path: "/api/v1/inbound/{id}",
  operationId: "getInboundMessage",
  summary: "Retrieve an inbound message",
  description: "An id that is not a UUID, or another account's message, is not found.",
  request: { path: z.object({ id: z.uuid().meta({ description: "The inbound message's id." }) }) },
  responses: {
    200: {
      description: "The inbound message.",
      body: kitEnvelope(inboundMessageSchema, "request successful"),
    },
  },
  failures: ["notFound"],
});

export const getInboundNumbersEndpoint = endpoint({
  ...common,
  method: "get",
  path: "/api/v1/inbound-numbers",
  operationId: "listInboundNumbers",
  summary: "The account's inbound numbers",
  description:
    "The short codes and numbers whose messages come to the account (the operator adds them). Each may be " +
    "used as `from` in the account's sends, written as listed.",
  responses: {
    200: {
      description: "The inbound numbers.",
      body: kitEnvelope(z.array(inboundNumberSchema), "request successful"),
    },
  },
  failures: [],
});
