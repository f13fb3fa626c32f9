import type { RequestHandler } from "express";
import { z } from "zod";
import { accept } from "../accept-send.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { idempotencyHeaders, idempotencyKeyOf } from "../idempotency.ts";
import { sendJson } from "../json-response.ts";
import { messageSchema, toMessageView } from "../message-view.ts";
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
 * POST /api/v1/sms — one recipient; the Message comes back bare, errors in the legacy shape.
 * webhook_url and webhook_events are extensions (the contract has webhook_url on bulk only),
 * validated exactly as on bulk; so is send_at (a scheduled send), whose Message gains send_at; so
 * are smart_encoding, validity_period and deliver_between (src/intake/send-options.ts).
 */
export const sendSmsBody = z
  .object({
    to: msisdnField(),
    from: textField(64),
    message: textField(10_000),
    webhook_url: webhookUrlField().optional(),
    webhook_events: eventTypesField().optional(),
    send_at: sendAtField().optional(),
    ...sendOptionsShape,
  })
  .strict()
  .superRefine(webhookEventsNeedUrl);

export function sendSms(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const idempotencyKey = idempotencyKeyOf(req);
    const body = parseBody(sendSmsBody, req.body);
    const options = sendOptionsOf(body, res.locals.sendDefaults);
    const text = textToSend(body.message, options.smartEncoding);
    const out = await accept(deps, {
      endpoint: "sms",
      idempotencyKey,
      rawBody: req.body,
      locals: res.locals,
      send: {
        recipients: [body.to],
        from: body.from,
        message: text.body,
        smartEncoded: text.smartEncoded,
        validityPeriod: options.validityPeriod,
        deliverBetween: options.deliverBetween,
        webhookUrl: body.webhook_url ?? null,
        webhookEvents: body.webhook_events ?? null,
        bulk: false,
        sendAt: body.send_at ?? null,
      },
      render: (send) => {
        const m = send.messages[0];
        if (!m) throw new Error("a single send has one message");
        return toMessageView({
          id: m.id,
          to: m.to,
          body: send.body,
          sender_id: send.from,
          operator: m.operator ?? "",
          charge: m.charge,
          charge_currency: send.currency,
          operator_response: m.operator_response,
          received_at: send.receivedAt,
          status: m.status,
          created_at: send.receivedAt,
          delivered_at: null,
          send_at: send.sendAt,
          validity_period: send.validityPeriod,
          expires_at: send.expiresAt,
          deliver_between: send.deliverBetween,
          smart_encoded: send.smartEncoded,
        });
      },
      unapprovedSender: () => new ApiError("unapprovedSender"),
    });
    sendJson(res, out.statusCode, out.body);
  };
}

export const sendSmsEndpoint = endpoint({
  method: "post",
  path: "/api/v1/sms",
  operationId: "sendSms",
  summary: "Send one SMS",
  description:
    "Validates the sender id, prices the text per segment, holds the charge on the prepaid balance and " +
    "queues the message, in one transaction. 202 means accepted, priced and queued, not delivered. " +
    "webhook_url, webhook_events and send_at (a scheduled send, held now, sent at send_at; the Message " +
    "then carries send_at) are extensions here, as are smart_encoding (the Message then says what was " +
    "sent, with smart_encoded), validity_period and deliver_between.",
  tag: "Messages",
  origin: "contract",
  errors: "legacy",
  request: { headers: idempotencyHeaders, body: sendSmsBody },
  responses: { 202: { description: "The Message, bare (no envelope).", body: messageSchema } },
  failures: [
    "validation",
    "unapprovedSender",
    "insufficientBalance",
    "invalidIdempotencyKey",
    "idempotencyConflict",
  ],
});
