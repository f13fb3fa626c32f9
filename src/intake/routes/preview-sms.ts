import type { RequestHandler } from "express";
import { z } from "zod";
import { listSenderIds } from "../../accounts/sender-ids.ts";
import type { Queryable } from "../../db/pool.ts";
import { internationalForm } from "../../domain/numbers.ts";
import { ownsInboundNumber } from "../../inbound/inbound-numbers.ts";
import { listedAmong } from "../../inbound/opt-outs.ts";
import { type PreparedSend, prepareSend, textOf, withOptOuts } from "../../sending/prepare-send.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { timestamp } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { segmentLimitError, sendAtError } from "../send-limits.ts";
import { sendOptionsOf, textToSend, windowProblem } from "../send-options.ts";
import { parseBody } from "../validation.ts";
import { batchBody, parseBatch } from "./send-batch.ts";
import { bulkBody } from "./send-bulk.ts";
import { sendSmsBody } from "./send-sms.ts";

/**
 * POST /api/v1/sms/preview — what a send would cost, per recipient and in total, without sending,
 * holding or writing anything (an extension, Kit conventions). Takes any send's body as it is:
 * `to` a string (validated as POST /api/v1/sms), an array (as POST /api/v1/sms/bulk), or
 * `messages` (as POST /api/v1/sms/batch); the sender id must be approved, the text fit
 * MAX_SEGMENTS and send_at and deliver_between hold, exactly as a send would check. With the send
 * options it says when the send would go and expire, and what smart encoding changes: both prices.
 */
export function previewBody(maxRecipients: number) {
  return z.union([sendSmsBody, bulkBody(maxRecipients), batchBody(maxRecipients)]);
}

const item = z.object({
  to: z.string(),
  operator: z.string(),
  encoding: z.enum(["gsm7", "ucs2"]),
  segments: z.int(),
  charge: z.int(),
  charge_currency: z.string(),
  /**
   * The status the send would give it: failed for a number no operator serves (billed, never sent)
   * or on the account's opt-out list (charge 0).
   */
  status: z.enum(["enqueued", "failed"]),
  message: z.string().optional().meta({ description: "A batch's item: its text as it would be sent." }),
  smart_encoded: z.literal(true).optional().meta({
    description: "A batch's item: its look-alike characters would be replaced.",
  }),
});

export const previewResponse = z.object({
  status: z.literal("success"),
  message: z.string(),
  data: z.object({
    total: z.int(),
    charge: z.int(),
    currency: z.string(),
    encoding: z.enum(["gsm7", "ucs2"]).meta({ description: "For a batch: ucs2 when any message would be." }),
    segments: z.int().meta({ description: "For a batch: the most segments any message would have." }),
    /** The balance now; a send is refused (422) when it does not cover the charge. */
    available: z.int(),
    sufficient_balance: z.boolean(),
    send_at: timestamp().optional().meta({
      description:
        "When the send would go: its send_at, or its delivery window's next opening; absent: at once.",
    }),
    expires_at: timestamp().optional().meta({
      description: "When its messages would fail if no carrier accepted them (a validity_period, a window).",
    }),
    smart_encoding: z
      .object({
        applied: z
          .boolean()
          .meta({ description: "The send would replace them (asked for, or the account's default)." }),
        charge_as_written: z.int().meta({ description: "The total for the text(s) as written." }),
        charge_smart_encoded: z.int().meta({ description: "The total with the look-alikes replaced." }),
        message: z.string().optional().meta({
          description: "A single or bulk send's text with its look-alikes replaced.",
        }),
      })
      .optional()
      .meta({
        description:
          "Present when replacing look-alike characters (docs/smart-encoding.md) would make a text GSM-7: " +
          "both prices, and which one the send would be charged.",
      }),
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

/** The body's kind, told by its shape, so that its errors are that send's. */
function kindOf(raw: unknown): "single" | "bulk" | "batch" {
  if (typeof raw !== "object" || raw === null) return "bulk";
  if ("messages" in raw) return "batch";
  return typeof (raw as { to?: unknown }).to === "string" ? "single" : "bulk";
}

export function previewSms(deps: IntakeDeps): RequestHandler {
  // The send's repeat cap too: a preview the send would refuse answers the send's error.
  const bulkSchema = bulkBody(deps.config.BULK_MAX_RECIPIENTS, deps.config.BULK_MAX_REPEATS);
  const batchSchema = batchBody(deps.config.BULK_MAX_RECIPIENTS);
  return async (req, res) => {
    const raw: unknown = req.body;
    const kind = kindOf(raw);
    const { accountId, currency, sendDefaults } = res.locals;
    // A batch's texts are checked with its fields, in one answer, as the send checks them.
    const read =
      kind === "batch"
        ? {
            batch: parseBatch(batchSchema, raw, {
              defaults: sendDefaults,
              maxSegments: deps.config.MAX_SEGMENTS,
            }),
          }
        : { plain: kind === "single" ? parseBody(sendSmsBody, raw) : parseBody(bulkSchema, raw) };
    const body = read.batch ? read.batch.body : read.plain;
    const options = sendOptionsOf(body, sendDefaults);
    // The texts as written and as the send would send them (checked as the send checks them).
    let recipients: string[];
    let written: string[];
    if (read.batch) {
      recipients = read.batch.body.messages.map((m) => m.to);
      written = read.batch.texts.map((t) => t.written);
    } else {
      const tooLong = segmentLimitError(
        textToSend(read.plain.message, options.smartEncoding).body,
        deps.config.MAX_SEGMENTS,
      );
      if (tooLong) throw new ApiError("validation", [tooLong]);
      recipients = typeof read.plain.to === "string" ? [read.plain.to] : read.plain.to;
      written = [read.plain.message];
    }
    const senders = await listSenderIds(deps.pool, accountId);
    const approved =
      senders.some((s) => s.address === body.from && s.verification_status === "verified") ||
      (await ownsInboundNumber(deps.pool, accountId, body.from));
    if (!approved)
      throw new ApiError("validation", [{ field: "from", description: "unknown or unapproved sender id" }]);
    // Recipients on the account's opt-out list would be failed at a charge of 0, as the send fails them.
    const listed = await listedAmong(
      deps.pool,
      accountId,
      recipients.map((to) => internationalForm(to)),
    );
    const withoutListed = (priced: PreparedSend) =>
      listed.size === 0
        ? priced
        : withOptOuts(
            priced,
            new Set(priced.messages.filter((m) => listed.has(internationalForm(m.to))).map((m) => m.id)),
          );
    const price = (smartEncoding: boolean) => {
      const texts = written.map((text) => textToSend(text, smartEncoding));
      const single = texts[0] ?? { body: "", smartEncoded: false };
      return withoutListed(
        prepareSend({
          accountId,
          currency,
          from: body.from,
          body: single.body,
          smartEncoded: single.smartEncoded,
          ...(kind === "batch" ? { texts } : {}),
          recipients,
          webhookUrl: null,
          webhookEvents: null,
          bulk: kind !== "single",
          sendAt: body.send_at ?? null,
          validityPeriod: options.validityPeriod,
          deliverBetween: options.deliverBetween,
          validityHours: deps.config.MESSAGE_VALIDITY_HOURS,
        }),
      );
    };
    const send = price(options.smartEncoding);
    const problem = (body.send_at && sendAtError(body.send_at)) || windowProblem(send);
    if (problem) throw new ApiError("validation", [problem]);
    // Both prices, when smart encoding changes any text at all.
    const [asWritten, smart] = options.smartEncoding ? [price(false), send] : [send, price(true)];
    const replaceable = smart.smartEncoded || smart.messages.some((m) => m.text?.smartEncoded);
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
        ...(send.sendAt ? { send_at: send.sendAt.toISOString() } : {}),
        ...(send.expiresAt ? { expires_at: send.expiresAt.toISOString() } : {}),
        ...(replaceable
          ? {
              smart_encoding: {
                applied: options.smartEncoding,
                charge_as_written: asWritten.total,
                charge_smart_encoded: smart.total,
                ...(kind === "batch" ? {} : { message: smart.body }),
              },
            }
          : {}),
        items: send.messages.map((m) => {
          const text = textOf(send, m);
          return {
            to: m.to,
            operator: m.operator ?? "",
            encoding: text.encoding,
            segments: text.segments,
            charge: m.charge,
            charge_currency: send.currency,
            status: m.status,
            ...(kind === "batch" ? { message: text.body } : {}),
            ...(kind === "batch" && text.smartEncoded ? { smart_encoded: true as const } : {}),
          };
        }),
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
    "Any send's body as it is: to a string (validated as POST /api/v1/sms), an array (as POST " +
    "/api/v1/sms/bulk), or messages (as POST /api/v1/sms/batch; each item then shows its text). The " +
    "same checks as the send (fields, segments, an approved from, send_at, a delivery window that opens " +
    "within the validity), answered without writing anything: no message, hold, job or idempotency key. " +
    "send_at and expires_at say when the send would go and expire; smart_encoding shows the charge " +
    "with and without look-alike characters replaced, whenever replacing them would change a text.",
  tag: "Messages",
  origin: "extension",
  errors: "kit",
  request: { body: (config) => previewBody(config.BULK_MAX_RECIPIENTS) },
  responses: { 200: { description: "Per recipient and in total.", body: previewResponse } },
  failures: ["validation"],
});
