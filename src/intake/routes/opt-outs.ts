import type { RequestHandler } from "express";
import { z } from "zod";
import { withTransaction } from "../../db/pool.ts";
import { internationalForm } from "../../domain/numbers.ts";
import { listOptOuts, optInByApi, optOutByApi } from "../../inbound/opt-outs.ts";
import { cursorKey, readCursor, signCursor } from "../../search/cursor.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { kitDone, kitEnvelope, timestamp } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { msisdnField, parseBody } from "../validation.ts";
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, queryOf } from "./search-sms.ts";

/**
 * The account's opt-out list (extensions, Kit conventions): numbers no send of the account
 * reaches. A number goes on it by an opt-out keyword it sends or by POST, and comes off by an
 * opt-in keyword or DELETE; each change is a contact.opted_out or contact.opted_in callback.
 * Numbers are kept in international form: +263…, 263… and 0… name one entry.
 */

export const optOutSchema = z
  .object({
    number: z.string().meta({ description: "Digits with the country code (international form)." }),
    created_at: timestamp().meta({ description: "When it went on the list." }),
    reason: z.enum(["keyword", "api"]).meta({ description: "A keyword the number sent, or this API." }),
    keyword: z.string().nullable().meta({ description: "The keyword, when a keyword put it there." }),
    inbound_message_id: z
      .uuid()
      .nullable()
      .meta({ description: "The inbound message that carried the keyword (GET /api/v1/inbound/{id})." }),
  })
  .meta({ id: "OptOut", description: "A number on the account's opt-out list." });

export const listOptOutsQuery = z
  .object({
    number: msisdnField().optional().meta({ description: "That number's entry alone (any of its forms)." }),
    limit: z
      .string({ error: `must be an integer from 1 to ${MAX_SEARCH_LIMIT}` })
      .refine((s) => /^\d{1,3}$/.test(s) && Number(s) >= 1 && Number(s) <= MAX_SEARCH_LIMIT, {
        message: `must be an integer from 1 to ${MAX_SEARCH_LIMIT}`,
      })
      .meta({
        pattern: "^\\d{1,3}$",
        description: `Entries per page, 1 to ${MAX_SEARCH_LIMIT} (default ${DEFAULT_SEARCH_LIMIT}).`,
      })
      .transform(Number)
      .optional(),
    cursor: z
      .string({ error: "must be a cursor from next_cursor" })
      .meta({ description: "next_cursor of the previous page, with the same number filter." })
      .optional(),
  })
  .strict();

export const optOutBody = z.object({ number: msisdnField() }).strict();

const OPTED_OUT = "number opted out";
const ALREADY = "number already opted out";
const OPTED_IN = "number opted in";

/** Cursors of this list carry the last entry's number where others carry an id. */
const NUMBER_KEY = /^[0-9]{3,20}$/;

/** GET /api/v1/opt-outs — the list, newest first, a page at a time. */
export function listAccountOptOuts(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const q = parseBody(listOptOutsQuery, queryOf(req.query));
    const accountId = res.locals.accountId;
    const number = q.number === undefined ? undefined : internationalForm(q.number);
    const key = await cursorKey(deps.pool);
    const scope = JSON.stringify(["opt-outs", accountId, number ?? null]);
    const after = q.cursor === undefined ? null : readCursor(key, scope, q.cursor, NUMBER_KEY);
    if (q.cursor !== undefined && after === null)
      throw new ApiError("validation", [
        { field: "cursor", description: "is not a cursor issued for this account and this filter" },
      ]);
    const page = await listOptOuts(deps.pool, accountId, {
      number,
      limit: q.limit ?? DEFAULT_SEARCH_LIMIT,
      after,
    });
    res.status(200).json({
      status: "success",
      message: "",
      data: { items: page.entries, next_cursor: page.next ? signCursor(key, scope, page.next) : null },
    });
  };
}

/** POST /api/v1/opt-outs — puts a number on the list: 201, or 200 when it was already there. */
export function addAccountOptOut(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const { number } = parseBody(optOutBody, req.body);
    const { created, entry } = await withTransaction(deps.pool, (tx) =>
      optOutByApi(tx, res.locals.accountId, internationalForm(number)),
    );
    if (created) deps.metrics.optOutChanges.inc({ change: "opted_out", reason: "api" });
    res
      .status(created ? 201 : 200)
      .json({ status: "success", message: created ? OPTED_OUT : ALREADY, data: entry });
  };
}

/** DELETE /api/v1/opt-outs/{number} — takes a number off the list; 404 when it is not on it. */
export function removeAccountOptOut(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const written = String(req.params.number);
    const number = internationalForm(written);
    // A path that is no number names no entry.
    if (!NUMBER_KEY.test(number)) throw new ApiError("notFound");
    const removed = await withTransaction(deps.pool, (tx) => optInByApi(tx, res.locals.accountId, number));
    if (!removed) throw new ApiError("notFound");
    deps.metrics.optOutChanges.inc({ change: "opted_in", reason: "api" });
    res.status(200).json({ status: "success", message: OPTED_IN });
  };
}

const common = { tag: "Inbound", origin: "extension", errors: "kit" } as const;

export const listOptOutsEndpoint = endpoint({
  ...common,
  method: "get",
  path: "/api/v1/opt-outs",
  operationId: "listOptOuts",
  summary: "The account's opt-out list",
  description:
    "Newest first, a page at a time (next_cursor, as GET /api/v1/sms). A send to a listed number reaches no " +
    "carrier: its message is created failed with operator_response OPTED_OUT and a charge of 0.",
  request: { query: listOptOutsQuery },
  responses: {
    200: {
      description: "A page of the list.",
      body: kitEnvelope(
        z.object({
          items: z.array(optOutSchema),
          next_cursor: z
            .string()
            .nullable()
            .meta({ description: "Pass as cursor for the next page; null on the last." }),
        }),
        "",
      ),
    },
  },
  failures: ["validation"],
});

export const addOptOutEndpoint = endpoint({
  ...common,
  method: "post",
  path: "/api/v1/opt-outs",
  operationId: "addOptOut",
  summary: "Put a number on the opt-out list",
  description:
    "From then on no send of the account reaches it. 201 when this call listed it (a contact.opted_out " +
    "callback, reason api), 200 when it was already listed (its entry unchanged, no callback).",
  request: { body: optOutBody },
  responses: {
    201: { description: "Listed now.", body: kitEnvelope(optOutSchema, OPTED_OUT) },
    200: { description: "Already listed.", body: kitEnvelope(optOutSchema, ALREADY) },
  },
  failures: ["validation"],
});

export const removeOptOutEndpoint = endpoint({
  ...common,
  method: "delete",
  path: "/api/v1/opt-outs/{number}",
  operationId: "removeOptOut",
  summary: "Take a number off the opt-out list",
  description:
    "Sends reach it again (a contact.opted_in callback, reason api). A number not on the list is not found.",
  request: {
    path: z.object({
      number: z.string().meta({
        description: "The number, in any of its forms (+263…, 263…, 0…).",
        examples: ["263771234567"],
      }),
    }),
  },
  responses: { 200: { description: "Taken off (no data).", body: kitDone(OPTED_IN) } },
  failures: ["notFound"],
});
