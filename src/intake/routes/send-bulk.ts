import type { RequestHandler } from "express";
import { z } from "zod";
import { accept } from "../accept-send.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { idempotencyKeyOf } from "../idempotency.ts";
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
 * (extension) schedules the whole send, and the result then gains data.send_at.
 */
export function bulkBody(maxRecipients: number) {
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
    })
    .strict()
    .superRefine(webhookEventsNeedUrl);
}

export function sendBulk(deps: IntakeDeps): RequestHandler {
  const schema = bulkBody(deps.config.BULK_MAX_RECIPIENTS);
  return async (req, res) => {
    const idempotencyKey = idempotencyKeyOf(req);
    const body = parseBody(schema, req.body);
    const out = await accept(deps, {
      endpoint: "sms/bulk",
      idempotencyKey,
      rawBody: req.body,
      locals: res.locals,
      send: {
        recipients: body.to,
        from: body.from,
        message: body.message,
        webhookUrl: body.webhook_url ?? null,
        webhookEvents: body.webhook_events ?? null,
        bulk: true,
        sendAt: body.send_at ?? null,
      },
      render: (send) => ({
        status: "success",
        message: "bulk sms enqueued",
        data: {
          // An extension: the id GET /api/v1/sms/bulk/{bulk_id} and the bulk_id filter take.
          bulk_id: send.bulkId,
          total: send.messages.length,
          charge: send.total,
          currency: send.currency,
          ...(send.sendAt ? { send_at: send.sendAt.toISOString() } : {}),
          items: send.messages.map((m) => ({
            id: m.id,
            to: m.to,
            status: m.status,
            operator: m.operator ?? "",
            charge: m.charge,
            charge_currency: send.currency,
          })),
        },
      }),
      unapprovedSender: () =>
        new ApiError("validation", [{ field: "from", description: "unknown or unapproved sender id" }]),
    });
    res.status(out.statusCode).json(out.body);
  };
}
