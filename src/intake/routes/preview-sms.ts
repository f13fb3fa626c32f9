import type { RequestHandler } from "express";
import { z } from "zod";
import { listSenderIds } from "../../accounts/sender-ids.ts";
import type { Queryable } from "../../db/pool.ts";
import { prepareSend } from "../../sending/prepare-send.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { segmentLimitError } from "../send-limits.ts";
import { parseBody } from "../validation.ts";
import { bulkBody } from "./send-bulk.ts";
import { sendSmsBody } from "./send-sms.ts";

/**
 * POST /api/v1/sms/preview — what a send would cost, per recipient and in total, without sending,
 * holding or writing anything (an extension, Kit conventions). Takes either send's body as it is:
 * `to` a string (validated as POST /api/v1/sms) or an array (as POST /api/v1/sms/bulk); the
 * sender id must be approved and the text fit MAX_SEGMENTS, exactly as a send would check.
 */
export function previewBody(maxRecipients: number) {
  return z.union([sendSmsBody, bulkBody(maxRecipients)]);
}

const item = z.object({
  to: z.string(),
  operator: z.string(),
  encoding: z.enum(["gsm7", "ucs2"]),
  segments: z.int(),
  charge: z.int(),
  charge_currency: z.string(),
  /** The status the send would give it: failed for a number no operator serves (billed, never sent). */
  status: z.enum(["enqueued", "failed"]),
});

export const previewResponse = z.object({
  status: z.literal("success"),
  message: z.string(),
  data: z.object({
    total: z.int(),
    charge: z.int(),
    currency: z.string(),
    encoding: z.enum(["gsm7", "ucs2"]),
    segments: z.int(),
    /** The balance now; a send is refused (422) when it does not cover the charge. */
    available: z.int(),
    sufficient_balance: z.boolean(),
    items: z.array(item),
  }),
});

async function availableBalance(db: Queryable, accountId: string): Promise<number> {
  const { rows } = await db.query<{ balance: number }>(
    "SELECT balance FROM account_balances WHERE account_id = $1",
    [accountId],
  );
  return rows[0]?.balance ?? 0;
}

export function previewSms(deps: IntakeDeps): RequestHandler {
  const bulkSchema = bulkBody(deps.config.BULK_MAX_RECIPIENTS);
  return async (req, res) => {
    const raw: unknown = req.body;
    // The shape of `to` says which send is previewed, so its errors are that send's.
    const single =
      typeof raw === "object" && raw !== null && typeof (raw as { to?: unknown }).to === "string";
    const body = single ? parseBody(sendSmsBody, raw) : parseBody(bulkSchema, raw);
    const recipients = typeof body.to === "string" ? [body.to] : body.to;
    const tooLong = segmentLimitError(body.message, deps.config.MAX_SEGMENTS);
    if (tooLong) throw new ApiError("validation", [tooLong]);
    const { accountId, currency } = res.locals;
    const senders = await listSenderIds(deps.pool, accountId);
    if (!senders.some((s) => s.address === body.from && s.verification_status === "verified"))
      throw new ApiError("validation", [{ field: "from", description: "unknown or unapproved sender id" }]);
    const send = prepareSend({
      accountId,
      currency,
      from: body.from,
      body: body.message,
      recipients,
      webhookUrl: null,
      webhookEvents: null,
      bulk: !single,
    });
    const available = await availableBalance(deps.pool, accountId);
    res.status(200).json({
      status: "success",
      message: "",
      data: {
        total: send.messages.length,
        charge: send.total,
        currency: send.currency,
        encoding: send.encoding,
        segments: send.segments,
        available,
        sufficient_balance: available >= send.total,
        items: send.messages.map((m) => ({
          to: m.to,
          operator: m.operator ?? "",
          encoding: send.encoding,
          segments: send.segments,
          charge: m.charge,
          charge_currency: send.currency,
          status: m.status,
        })),
      },
    } satisfies z.input<typeof previewResponse>);
  };
}

export const previewSmsEndpoint = endpoint({
  method: "post",
  path: "/api/v1/sms/preview",
  operationId: "previewSms",
  summary: "Price a send without sending it",
  description:
    "Either send's body as it is: to a string (validated as POST /api/v1/sms) or an array (as POST " +
    "/api/v1/sms/bulk). The same checks as the send (fields, segments, an approved from), answered " +
    "without writing anything: no message, hold, job or idempotency key.",
  tag: "Messages",
  origin: "extension",
  errors: "kit",
  request: { body: (config) => previewBody(config.BULK_MAX_RECIPIENTS) },
  responses: { 200: { description: "Per recipient and in total.", body: previewResponse } },
  failures: ["validation"],
});
