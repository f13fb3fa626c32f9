import type { RequestHandler } from "express";
import { z } from "zod";
import { OPERATORS } from "../../../carriers/index.ts";
import { cursorKey, readCursor, signCursor } from "../../search/cursor.ts";
import {
  filtersScope,
  MESSAGE_STATUSES,
  type MessageFilters,
  searchMessages,
} from "../../search/search-messages.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { messageSchema, toMessageView } from "../message-view.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { msisdnField, parseBody, UUID_PATTERN } from "../validation.ts";

/**
 * GET /api/v1/sms — the account's messages, newest first, filtered, a page at a time (an
 * extension, Kit conventions). Each item is the Message exactly as GET /api/v1/sms/{id} shows it.
 */
export const MAX_SEARCH_LIMIT = 100;
export const DEFAULT_SEARCH_LIMIT = 50;

const queryDateTime = (description: string) =>
  z
    .string({ error: "must be an RFC 3339 date-time" })
    .refine((s) => z.iso.datetime({ offset: true }).safeParse(s).success, {
      message: "must be an RFC 3339 date-time",
      abort: true,
    })
    .meta({ format: "date-time", description })
    .transform((s) => new Date(s));

/** The filters shared by the search and its CSV export; each given at most once. */
export const messageFiltersShape = {
  status: z.enum(MESSAGE_STATUSES, { error: `must be one of ${MESSAGE_STATUSES.join(", ")}` }).optional(),
  operator: z.enum(OPERATORS, { error: `must be one of ${OPERATORS.join(", ")}` }).optional(),
  to: msisdnField().optional(),
  bulk_id: z
    .string({ error: "must be a UUID" })
    .refine((s) => UUID_PATTERN.test(s), "must be a UUID")
    .meta({ format: "uuid", description: "The messages of one bulk send (its data.bulk_id)." })
    .optional(),
  since: queryDateTime("Messages created at or after this instant (RFC 3339).").optional(),
  until: queryDateTime("Messages created before this instant (RFC 3339).").optional(),
};

/** since is inclusive, until exclusive: an empty or reversed range is a mistake worth naming. */
export function sinceBeforeUntil(
  q: { since?: Date | undefined; until?: Date | undefined },
  ctx: z.RefinementCtx,
) {
  if (q.since && q.until && !(q.since.getTime() < q.until.getTime()))
    ctx.addIssue({ code: "custom", path: ["until"], message: "must be after since" });
}

export const searchSmsQuery = z
  .object({
    ...messageFiltersShape,
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
  // A misspelt filter would otherwise return every message: refused, as unknown body fields are.
  .strict()
  .superRefine(sinceBeforeUntil);

export const searchSmsResponse = z.object({
  status: z.literal("success"),
  message: z.string(),
  data: z.object({
    items: z.array(messageSchema),
    /** Pass as `cursor` for the next page; null on the last. */
    next_cursor: z.string().nullable(),
  }),
});

export function toFilters(q: z.infer<z.ZodObject<typeof messageFiltersShape>>): MessageFilters {
  return {
    status: q.status,
    operator: q.operator,
    to: q.to,
    bulkId: q.bulk_id,
    since: q.since,
    until: q.until,
  };
}

/** The query string as an object (Express gives repeated names as arrays; those fail validation). */
export function queryOf(query: unknown): Record<string, unknown> {
  return { ...(query as Record<string, unknown>) };
}

export function searchSms(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const q = parseBody(searchSmsQuery, queryOf(req.query));
    const accountId = res.locals.accountId;
    const filters = toFilters(q);
    const key = await cursorKey(deps.pool);
    const scope = filtersScope(accountId, filters);
    const after = q.cursor === undefined ? null : readCursor(key, scope, q.cursor);
    if (q.cursor !== undefined && after === null)
      throw new ApiError("validation", [
        { field: "cursor", description: "is not a cursor issued for this account and these filters" },
      ]);
    const page = await searchMessages(deps.pool, accountId, filters, {
      limit: q.limit ?? DEFAULT_SEARCH_LIMIT,
      after,
    });
    res.status(200).json({
      status: "success",
      message: "",
      data: {
        items: page.messages.map(toMessageView),
        next_cursor: page.next ? signCursor(key, scope, page.next) : null,
      },
    });
  };
}

export const searchSmsEndpoint = endpoint({
  method: "get",
  path: "/api/v1/sms",
  operationId: "searchSms",
  summary: "Search the account's messages",
  description:
    "Newest first, each item the Message as GET /api/v1/sms/{id} answers it, a page at a time: pass " +
    "next_cursor back as cursor, with the same filters, until it is null (a page filtered by status or " +
    "operator may be short, even empty, before the last). Every filter is optional and given once; " +
    "since is inclusive, until exclusive; an unknown parameter is a validation error.",
  tag: "Messages",
  origin: "extension",
  errors: "kit",
  request: { query: searchSmsQuery },
  responses: { 200: { description: "A page of messages.", body: searchSmsResponse } },
  failures: ["validation", "tooManyExpensive"],
});
