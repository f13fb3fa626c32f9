import type { RequestHandler } from "express";
import { z } from "zod";
import { fillTemplate, isWrittenExactly, parseTemplate, type Template } from "../../domain/templates.ts";
import { accept } from "../accept-send.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError, type FieldError } from "../errors.ts";
import { idempotencyHeaders, idempotencyKeyOf } from "../idempotency.ts";
import { sendJson } from "../json-response.ts";
import { kitEnvelope } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { segmentLimitError } from "../send-limits.ts";
import { sendOptionsOf, sendOptionsShape, type TextToSend, textToSend } from "../send-options.ts";
import {
  eventTypesField,
  msisdnField,
  parseBody,
  sendAtField,
  textField,
  textProblem,
  webhookEventsNeedUrl,
  webhookUrlField,
} from "../validation.ts";
import { bulkResultSchema, manyResult } from "./send-bulk.ts";

/**
 * POST /api/v1/sms/batch (extension, Kit conventions) — many messages in one request, each with
 * its own recipient and text: given whole (`message`), or made from the batch's `template` and the
 * item's `variables`. Priced per message and accepted or refused whole, as a bulk send is, and
 * answered as one: a bulk_id, the total, and an item per message in request order.
 */
const MESSAGE_MAX_CHARACTERS = 10_000;

const variablesField = z
  .record(
    z.string(),
    z.union(
      [
        z.string(),
        z.number().refine(isWrittenExactly, "must be a string: this number cannot be written exactly"),
      ],
      { error: "must be a string or a number" },
    ),
    { error: "must be an object whose values are strings or numbers" },
  )
  .meta({
    description:
      "The item's values for the template's placeholders, by name. A string is written as given; a " +
      "number in its shortest form (12.50 as 12.5, -0 as 0). A number with more than 15 significant " +
      "digits, or one written with an exponent (1e21 and above, below 0.000001), is refused: send it as a string.",
    examples: [{ name: "Rudo", amount: "12.50" }],
  });

const batchItem = z
  .object(
    {
      to: msisdnField(),
      message: textField(MESSAGE_MAX_CHARACTERS)
        .optional()
        .meta({ description: "This recipient's text; required without a template, refused with one." }),
      variables: variablesField
        .optional()
        .meta({ description: "Required with a template, refused without one." }),
    },
    { error: "must be an object with to, and message or variables" },
  )
  .strict()
  .meta({ id: "BatchItem" });

/** Each item is of the batch's kind: a text of its own, or variables for the template. */
function itemsOfOneKind(
  body: { template?: string | undefined; messages: readonly { message?: string; variables?: unknown }[] },
  ctx: z.RefinementCtx,
): void {
  const templated = body.template !== undefined;
  body.messages.forEach((item, i) => {
    if (templated && item.message !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["messages", i, "message"],
        message: "is not allowed with a template",
      });
    if (templated && item.variables === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["messages", i, "variables"],
        message: "is required with a template",
      });
    if (!templated && item.message === undefined)
      ctx.addIssue({ code: "custom", path: ["messages", i, "message"], message: "is required" });
    if (!templated && item.variables !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["messages", i, "variables"],
        message: "is allowed only with a template",
      });
  });
}

export function batchBody(maxMessages: number) {
  return z
    .object({
      from: textField(64),
      template: textField(MESSAGE_MAX_CHARACTERS)
        .optional()
        .meta({
          description:
            "A text with {{name}} placeholders (letters, digits and _; spaces inside the braces allowed), " +
            "filled per item from its variables. Without it, each item gives its own message.",
          examples: ["Hi {{name}}, your balance is {{amount}}."],
        }),
      messages: z
        .array(batchItem, {
          error: (issue) => (issue.input === undefined ? "is required" : "must be an array of messages"),
        })
        .min(1, "must contain at least one message")
        .max(maxMessages, `must contain at most ${maxMessages} messages`),
      webhook_url: webhookUrlField().optional(),
      webhook_events: eventTypesField().optional(),
      send_at: sendAtField().optional(),
      ...sendOptionsShape,
    })
    .strict()
    .superRefine(webhookEventsNeedUrl)
    .superRefine(itemsOfOneKind);
}

type BatchBody = z.infer<ReturnType<typeof batchBody>>;

/** An item's text as written (the template filled in) and as sent (its look-alikes replaced when asked). */
export interface BatchText {
  written: string;
  sent: TextToSend;
}

/**
 * Every item's text, or every problem found, each naming its item: a variable the template needs
 * and the item lacks, a filled text that breaks a text's rules, a text (as sent) over the segment
 * limit.
 */
export function batchTexts(
  body: BatchBody,
  options: { smartEncoding: boolean; maxSegments: number },
): { texts: BatchText[] } | { problems: FieldError[] } {
  let template: Template | null = null;
  if (body.template !== undefined) {
    const parsed = parseTemplate(body.template);
    if ("invalid" in parsed)
      return {
        problems: [
          {
            field: "template",
            description: `${parsed.invalid} is not a placeholder: a name is letters, digits and _, not starting with a digit`,
          },
        ],
      };
    template = parsed;
  }
  const problems: FieldError[] = [];
  const texts = body.messages.map((item, i): BatchText => {
    let written = item.message ?? "";
    if (template) {
      const filled = fillTemplate(template, item.variables ?? {});
      if ("missing" in filled) {
        for (const name of filled.missing)
          problems.push({
            field: `messages[${i}].variables.${name}`,
            description: "is required by the template",
          });
        return { written, sent: { body: written, smartEncoded: false } };
      }
      const reason = textProblem(filled.text, MESSAGE_MAX_CHARACTERS);
      if (reason) {
        problems.push({ field: `messages[${i}].variables`, description: `make a text that ${reason}` });
        return { written: filled.text, sent: { body: filled.text, smartEncoded: false } };
      }
      written = filled.text;
    }
    const sent = textToSend(written, options.smartEncoding);
    const tooLong = segmentLimitError(sent.body, options.maxSegments);
    if (tooLong)
      problems.push({
        field: template ? `messages[${i}].variables` : `messages[${i}].message`,
        description: template ? `make a text that ${tooLong.description}` : tooLong.description,
      });
    return { written, sent };
  });
  return problems.length > 0 ? { problems } : { texts };
}

export function sendBatch(deps: IntakeDeps): RequestHandler {
  const schema = batchBody(deps.config.BULK_MAX_RECIPIENTS);
  return async (req, res) => {
    const idempotencyKey = idempotencyKeyOf(req);
    const body = parseBody(schema, req.body);
    const options = sendOptionsOf(body, res.locals.sendDefaults);
    const made = batchTexts(body, {
      smartEncoding: options.smartEncoding,
      maxSegments: deps.config.MAX_SEGMENTS,
    });
    if ("problems" in made) throw new ApiError("validation", made.problems);
    const out = await accept(deps, {
      endpoint: "sms/batch",
      idempotencyKey,
      rawBody: req.body,
      locals: res.locals,
      send: {
        recipients: body.messages.map((m) => m.to),
        from: body.from,
        message: "",
        texts: made.texts.map((t) => t.sent),
        webhookUrl: body.webhook_url ?? null,
        webhookEvents: body.webhook_events ?? null,
        bulk: true,
        sendAt: body.send_at ?? null,
        validityPeriod: options.validityPeriod,
        deliverBetween: options.deliverBetween,
      },
      render: (send) => ({ status: "success", message: "batch sms enqueued", data: manyResult(send) }),
      unapprovedSender: () =>
        new ApiError("validation", [{ field: "from", description: "unknown or unapproved sender id" }]),
    });
    sendJson(res, out.statusCode, out.body);
  };
}

export const sendBatchEndpoint = endpoint({
  method: "post",
  path: "/api/v1/sms/batch",
  operationId: "sendBatch",
  summary: "Send many messages, each with its own recipient and text",
  description:
    "Up to BULK_MAX_RECIPIENTS (10,000 by default) messages in one request: each item gives its own " +
    "message, or the batch gives a template with {{name}} placeholders and each item its variables. " +
    "Priced per message, and accepted or refused whole like a bulk send: one bad item (a missing " +
    "variable, a text too long, a bad number), an unapproved sender or a balance that does not cover " +
    "every message refuses it all, and nothing is sent. Answered like a bulk send: a bulk_id (for GET " +
    "/api/v1/sms/bulk/{bulk_id} and the bulk_id filter), the total and an item per message, in request order.",
  tag: "Messages",
  origin: "extension",
  errors: "kit",
  request: {
    headers: idempotencyHeaders,
    body: (config) => batchBody(config.BULK_MAX_RECIPIENTS),
  },
  responses: {
    202: {
      description: "Accepted: one message per item, in request order.",
      body: kitEnvelope(bulkResultSchema, "batch sms enqueued"),
    },
  },
  failures: ["validation", "insufficientBalance", "invalidIdempotencyKey", "idempotencyConflict"],
});
