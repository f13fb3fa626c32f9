import type { RequestHandler } from "express";
import { z } from "zod";
import { internationalForm } from "../../domain/numbers.ts";
import type { PreparedSend } from "../../sending/prepare-send.ts";
import { accept } from "../accept-send.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { idempotencyHeaders, idempotencyKeyOf } from "../idempotency.ts";
import { sendJson } from "../json-response.ts";
import { amount, kitEnvelope, timestamp } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { sendOptionsOf, sendOptionsShape, textToSend } from "../send-options.ts";
import {
  eventTypesField,
  msisdnField,
  parseBody,
  sendAtField,
  textField,
  webhookEventsNeedUrl,
  webhookUrlField,
} from "../validation.ts";

/**
 * POST /api/v1/sms/bulk — one body, many recipients; accepted or rejected whole; Kit shapes.
 * webhook_events (extension) narrows the callbacks to webhook_url to the types it names; send_at
 * (extension) schedules the whole send, and the result then gains data.send_at; smart_encoding,
 * validity_period and deliver_between (extensions, src/intake/send-options.ts) apply to every message.
 */
export function bulkBody(maxRecipients: number, maxRepeats = 0) {
  return z
    .object({
      to: z
        .array(msisdnField(), {
          error: (issue) => (issue.input === undefined ? "is required" : "must be an array of phone numbers"),
        })
        .min(1, "must contain at least one recipient")
        .max(maxRecipients, `must contain at most ${maxRecipients} recipients`),
      from: textField(64),
      message: textField(10_000),
      webhook_url: webhookUrlField().optional(),
      webhook_events: eventTypesField().optional(),
      send_at: sendAtField().optional(),
      ...sendOptionsShape,
    })
    .strict()
    .superRefine(webhookEventsNeedUrl)
    .superRefine((body, ctx) => {
      // The contract bills a number repeated like any other recipient: capped only when asked.
      if (maxRepeats === 0) return;
      // One number as opt-outs count it: +263…, 263…, 00263… and 0 with 9 digits are one.
      const seen = new Map<string, number>();
      for (const to of body.to) {
        const number = internationalForm(to);
        const times = (seen.get(number) ?? 0) + 1;
        seen.set(number, times);
        if (times === maxRepeats + 1)
          ctx.addIssue({
            code: "custom",
            path: ["to"],
            message: `must not name one number more than ${maxRepeats === 1 ? "once" : `${maxRepeats} times`}`,
          });
      }
    });
}

export function sendBulk(deps: IntakeDeps): RequestHandler {
  const schema = bulkBody(deps.config.BULK_MAX_RECIPIENTS, deps.config.BULK_MAX_REPEATS);
  return async (req, res) => {
    const idempotencyKey = idempotencyKeyOf(req);
    const body = parseBody(schema, req.body);
    const options = sendOptionsOf(body, res.locals.sendDefaults);
    const text = textToSend(body.message, options.smartEncoding);
    const out = await accept(deps, {
      endpoint: "sms/bulk",
      idempotencyKey,
      rawBody: req.body,
      locals: res.locals,
      send: {
        recipients: body.to,
        from: body.from,
        message: text.body,
        smartEncoded: text.smartEncoded,
        validityPeriod: options.validityPeriod,
        deliverBetween: options.deliverBetween,
        webhookUrl: body.webhook_url ?? null,
        webhookEvents: body.webhook_events ?? null,
        bulk: true,
        sendAt: body.send_at ?? null,
      },
      render: (send) => ({ status: "success", message: "bulk sms enqueued", data: manyResult(send) }),
      unapprovedSender: () =>
        new ApiError("validation", [{ field: "from", description: "unknown or unapproved sender id" }]),
    });
    sendJson(res, out.statusCode, out.body);
  };
}

/** The data of a bulk or batch send's answer: its total, and one item per message in request order. */
export function manyResult(send: PreparedSend) {
  return {
    // An extension: the id GET /api/v1/sms/bulk/{bulk_id} and the bulk_id filter take.
    bulk_id: send.bulkId,
    total: send.messages.length,
    charge: send.total,
    currency: send.currency,
    ...(send.sendAt ? { send_at: send.sendAt.toISOString() } : {}),
    ...(send.expiresAt ? { expires_at: send.expiresAt.toISOString() } : {}),
    ...(send.smartEncoded ? { smart_encoded: true } : {}),
    items: send.messages.map((m) => ({
      id: m.id,
      to: m.to,
      status: m.status,
      operator: m.operator ?? "",
      charge: m.charge,
      charge_currency: send.currency,
      // A batch message's own text: its look-alikes replaced.
      ...(m.text?.smartEncoded ? { smart_encoded: true } : {}),
    })),
  };
}

const bulkItemSchema = z.object({
  id: z.uuid().meta({ description: "Message id; behaves exactly like a single send's." }),
  to: z.string(),
  status: z.enum(["enqueued", "failed"]).meta({
    description:
      "failed for a number no operator serves (billed), or on the account's opt-out list (charge 0, never sent).",
  }),
  operator: z.string().meta({ description: "econet, netone, telecel, or empty when unroutable." }),
  charge: amount().meta({ description: "Held for this recipient, ten-thousandths: an integer here." }),
  charge_currency: z.string(),
  smart_encoded: z.literal(true).optional().meta({
    description: "Extension, in a batch's answer: this message's look-alike characters were replaced.",
  }),
});

export const bulkResultSchema = z
  .object({
    bulk_id: z.uuid().meta({
      description:
        "Extension: the bulk send's id, for GET and DELETE /api/v1/sms/bulk/{bulk_id} and the bulk_id filter.",
    }),
    total: z.int().meta({ description: "Recipients accepted." }),
    charge: amount().meta({ description: "Total held for the send, ten-thousandths: an integer here." }),
    currency: z.string().meta({ description: "Currency of charge (named currency, not charge_currency)." }),
    send_at: timestamp().optional().meta({
      description:
        "Extension: when a scheduled send is due, or its delivery window opens (UTC); present on those sends only.",
    }),
    expires_at: timestamp()
      .optional()
      .meta({
        description:
          "Extension: when its messages fail if no carrier has accepted them; present with a validity_period, " +
          "or when a delivery window delayed the send.",
      }),
    smart_encoded: z.literal(true).optional().meta({
      description:
        "Extension: the text's look-alike characters were replaced (smart_encoding); the charge is for it.",
    }),
    items: z.array(bulkItemSchema).meta({ description: "One per recipient, in request order." }),
  })
  .meta({ id: "BulkResult" });

export const sendBulkEndpoint = endpoint({
  method: "post",
  path: "/api/v1/sms/bulk",
  operationId: "sendBulk",
  summary: "Send one text to many recipients",
  description:
    "Priced as one send and accepted or rejected whole: one bad recipient, an unapproved sender or a " +
    "balance that does not cover every recipient rejects it all, and nothing is sent. send_at (extension) " +
    "schedules the whole send; the result then carries send_at.",
  tag: "Messages",
  origin: "contract",
  errors: "kit",
  request: {
    headers: idempotencyHeaders,
    body: (config) => bulkBody(config.BULK_MAX_RECIPIENTS),
  },
  responses: {
    202: {
      description: "Accepted: one message per recipient.",
      body: kitEnvelope(bulkResultSchema, "bulk sms enqueued"),
    },
  },
  failures: ["validation", "insufficientBalance", "invalidIdempotencyKey", "idempotencyConflict"],
});
