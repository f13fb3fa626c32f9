import { once } from "node:events";
import type { RequestHandler, Response } from "express";
import { z } from "zod";
import { csvRecord } from "../../search/csv.ts";
import { countCovered, type FoundMessage, searchMessages } from "../../search/search-messages.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { toMessageView } from "../message-view.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { parseBody } from "../validation.ts";
import { messageFiltersShape, queryOf, sinceBeforeUntil, toFilters } from "./search-sms.ts";

/**
 * GET /api/v1/sms/export.csv — the messages a search would list, every page of them, as one CSV
 * file for reconciliation (an extension; errors in the Kit shape). Streamed a thousand rows at a
 * time, never held whole; bounded: a query that covers more than SEARCH_EXPORT_MAX_ROWS messages
 * (counted before status and operator filters) is refused, to be split by time.
 */
export const exportSmsQuery = z.object(messageFiltersShape).strict().superRefine(sinceBeforeUntil);

/**
 * The CSV columns: the Message's fields, then the bulk send it belongs to (empty for a single
 * send), then where its charge stands: `held`, `captured` (taken) or `released` (given back, as
 * for a message cancelled or failed before a carrier took it). What was billed is the sum of the
 * captured charges.
 */
export const EXPORT_COLUMNS = [
  "id",
  "to",
  "message",
  "sender_id",
  "operator",
  "charge",
  "charge_currency",
  "operator_response",
  "received_at",
  "status",
  "created_at",
  "delivered_at",
  "bulk_id",
  "billing",
] as const;

const CHUNK_ROWS = 1_000;

function toCsv(row: FoundMessage): string {
  const m = toMessageView(row);
  return csvRecord([
    m.id,
    m.to,
    m.message,
    m.sender_id,
    m.operator,
    m.charge,
    m.charge_currency,
    m.operator_response,
    m.received_at,
    m.status,
    m.created_at,
    m.delivered_at ?? "",
    row.bulk_id ?? "",
    row.billing,
  ]);
}

/** Resolves once the response can take more, or the client has gone (before or while it waits). */
export async function drained(res: Response): Promise<void> {
  // Gone already: its "close" has been emitted and will not come again.
  if (res.destroyed || res.writableEnded) return;
  const ac = new AbortController();
  await Promise.race([
    once(res, "drain", { signal: ac.signal }),
    once(res, "close", { signal: ac.signal }),
  ]).finally(() => ac.abort());
}

export function exportSms(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const q = parseBody(exportSmsQuery, queryOf(req.query));
    const accountId = res.locals.accountId;
    const filters = toFilters(q);
    const max = deps.config.SEARCH_EXPORT_MAX_ROWS;
    if ((await countCovered(deps.pool, accountId, filters, max)) > max)
      throw new ApiError("validation", [
        {
          field: "since",
          description: `the query covers more than ${max} messages: narrow it with since and until (or bulk_id, to)`,
        },
      ]);

    res.status(200);
    res.setHeader("Content-Type", "text/csv; charset=utf-8");
    res.setHeader("Content-Disposition", 'attachment; filename="messages.csv"');
    res.write(csvRecord(EXPORT_COLUMNS));
    let written = 0;
    let after = null;
    try {
      do {
        const page = await searchMessages(deps.pool, accountId, filters, { limit: CHUNK_ROWS, after });
        written += page.messages.length;
        // Only messages committed after the count could take it past the bound; a cut file would
        // look whole, so the transfer is broken off instead.
        if (written > max) throw new Error("export outgrew its bound while it ran");
        if (page.messages.length > 0 && !res.write(page.messages.map(toCsv).join(""))) await drained(res);
        after = page.next;
      } while (after !== null && !res.destroyed);
      res.end();
    } catch (err) {
      // The status line is gone: the only honest signal left is an incomplete response.
      deps.logger.warn({ err, req: { id: res.locals.requestId } }, "message export broken off");
      res.destroy();
    }
  };
}

export const exportSmsEndpoint = endpoint({
  method: "get",
  path: "/api/v1/sms/export.csv",
  operationId: "exportSms",
  summary: "Export the messages of a search as CSV",
  description:
    "Every message GET /api/v1/sms would list for the same filters (no limit, no cursor), in its order, " +
    "as one RFC 4180 file, streamed. A query covering more than SEARCH_EXPORT_MAX_ROWS messages is a " +
    "validation error on since: export a day or an hour at a time. An export cut short ends as a broken " +
    "transfer, never as a file that looks whole.",
  tag: "Messages",
  origin: "extension",
  errors: "kit",
  request: { query: exportSmsQuery },
  responses: {
    200: {
      description: "The CSV file.",
      body: z.string().meta({
        description: `A header row, then one row per message; columns ${EXPORT_COLUMNS.join(", ")} (bulk_id empty for a single send; billing: held, captured or released).`,
      }),
      contentType: "text/csv",
      headers: z.object({
        "Content-Disposition": z.literal('attachment; filename="messages.csv"'),
      }),
    },
  },
  failures: ["validation", "tooManyExpensive"],
});
