import type { RequestHandler } from "express";
import { z } from "zod";
import type { SendDefaults } from "../../accounts/send-defaults.ts";
import { fillTemplate, isWrittenExactly, parseTemplate, type Template } from "../../domain/templates.ts";
import { accept } from "../accept-send.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError, type FieldError } from "../errors.ts";
import { idempotencyHeaders, idempotencyKeyOf } from "../idempotency.ts";
import { sendJson } from "../json-response.ts";
import { kitEnvelope } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { segmentLimitError } from "../send-limits.ts";
import {
  type SendOptions,
  sendOptionsOf,
  sendOptionsShape,
  type TextToSend,
  textToSend,
} from "../send-options.ts";
import {
  eventTypesField,
  msisdnField,
  sendAtField,
  textField,
  textProblem,
  toFieldErrors,
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

/** Where an item is not of the batch's kind: a text of its own, or variables for the template. */
function kindProblems(
  templated: boolean,
  item: { message?: unknown; variables?: unknown },
): { key: "message" | "variables"; message: string }[] {
  const problems: { key: "message" | "variables"; message: string }[] = [];
  if (templated && item.message !== undefined)
    problems.push({ key: "message", message: "is not allowed with a template" });
  if (templated && item.variables === undefined)
    problems.push({ key: "variables", message: "is required with a template" });
  if (!templated && item.message === undefined) problems.push({ key: "message", message: "is required" });
  if (!templated && item.variables !== undefined)
    problems.push({ key: "variables", message: "is allowed only with a template" });
  return problems;
}

/** Each item is of the batch's kind. */
function itemsOfOneKind(
  body: { template?: string | undefined; messages: readonly { message?: string; variables?: unknown }[] },
  ctx: z.RefinementCtx,
): void {
  const templated = body.template !== undefined;
  body.messages.forEach((item, i) => {
    for (const problem of kindProblems(templated, item))
      ctx.addIssue({ code: "custom", path: ["messages", i, problem.key], message: problem.message });
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

/** What an item's text is made of: its own message, or its variables for the template. */
type ItemText = { message?: string | undefined; variables?: Record<string, string | number> | undefined };

/**
 * Every item's text and every problem found, each naming its item: a variable the template needs
 * and the item lacks, a filled text that breaks a text's rules, a text (as sent) over the segment
 * limit. An item given as null (refused already for what it holds) is passed over.
 */
function textsOf(
  template: string | undefined,
  items: readonly (ItemText | null)[],
  options: { smartEncoding: boolean; maxSegments: number },
): { texts: (BatchText | null)[]; problems: FieldError[] } {
  let parsed: Template | null = null;
  if (template !== undefined) {
    const read = parseTemplate(template);
    if ("invalid" in read)
      return {
        texts: [],
        problems: [
          {
            field: "template",
            description: `${read.invalid} is not a placeholder: a name is letters, digits and _, not starting with a digit`,
          },
        ],
      };
    parsed = read;
  }
  const problems: FieldError[] = [];
  const texts = items.map((item, i): BatchText | null => {
    if (item === null) return null;
    let written = item.message ?? "";
    if (parsed) {
      const filled = fillTemplate(parsed, item.variables ?? {});
      if ("missing" in filled) {
        for (const name of filled.missing)
          problems.push({
            field: `messages[${i}].variables.${name}`,
            description: "is required by the template",
          });
        return null;
      }
      const reason = textProblem(filled.text, MESSAGE_MAX_CHARACTERS);
      if (reason) {
        problems.push({ field: `messages[${i}].variables`, description: `make a text that ${reason}` });
        return null;
      }
      written = filled.text;
    }
    const sent = textToSend(written, options.smartEncoding);
    const tooLong = segmentLimitError(sent.body, options.maxSegments);
    if (tooLong)
      problems.push({
        field: parsed ? `messages[${i}].variables` : `messages[${i}].message`,
        description: parsed ? `make a text that ${tooLong.description}` : tooLong.description,
      });
    return { written, sent };
  });
  return { texts, problems };
}

/** A batch as far as its texts go, read from a body the schema refused. */
const looseBatch = z.object({
  template: z.unknown().optional(),
  smart_encoding: z.unknown().optional(),
  messages: z.array(z.unknown()),
});
const looseItem = z.object({
  message: textField(MESSAGE_MAX_CHARACTERS).optional(),
  variables: variablesField.optional(),
});

/**
 * The problems of the items' texts in a body the schema refused, so that one answer names every
 * problem (a bad number in one item and a missing variable in another): each item whose own
 * message and variables are valid and of the batch's kind is checked as an accepted batch's would
 * be. Its kind is told here too: zod skips the check across fields when a field is missing.
 */
function textProblemsBeside(raw: unknown, defaults: SendDefaults, maxSegments: number): FieldError[] {
  const body = looseBatch.safeParse(raw);
  if (!body.success) return [];
  const templated = body.data.template !== undefined;
  const problems: FieldError[] = [];
  const items = body.data.messages.map((given, i): ItemText | null => {
    const item = looseItem.safeParse(given);
    if (!item.success) return null;
    const wrongKind = kindProblems(templated, item.data);
    for (const problem of wrongKind)
      problems.push({ field: `messages[${i}].${problem.key}`, description: problem.message });
    return wrongKind.length === 0 ? item.data : null;
  });
  const template = textField(MESSAGE_MAX_CHARACTERS).optional().safeParse(body.data.template);
  // A template that is no text is the schema's to tell; nothing can be filled from it.
  if (!template.success) return problems;
  const smartEncoding =
    typeof body.data.smart_encoding === "boolean" ? body.data.smart_encoding : defaults.smartEncoding;
  return [...problems, ...textsOf(template.data, items, { smartEncoding, maxSegments }).problems];
}

/** A batch read and checked whole: its body, its options and every item's text. */
export interface ParsedBatch {
  body: BatchBody;
  options: SendOptions;
  texts: BatchText[];
}

/**
 * Parses a batch, send or preview alike, or throws one validation error naming every problem:
 * the schema's (fields, numbers, kinds) and the texts' (variables, text rules, segments) together.
 */
export function parseBatch(
  schema: ReturnType<typeof batchBody>,
  raw: unknown,
  context: { defaults: SendDefaults; maxSegments: number },
): ParsedBatch {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) {
    const errors = toFieldErrors(parsed.error);
    // A list refused whole (too long, empty, not a list) is not read item by item.
    if (errors.some((e) => e.field === "messages" || e.field === "body"))
      throw new ApiError("validation", errors);
    const told = new Set(errors.map((e) => `${e.field} ${e.description}`));
    for (const problem of textProblemsBeside(raw ?? {}, context.defaults, context.maxSegments)) {
      const key = `${problem.field} ${problem.description}`;
      if (told.has(key)) continue;
      told.add(key);
      errors.push(problem);
    }
    throw new ApiError("validation", errors);
  }
  const body = parsed.data;
  const options = sendOptionsOf(body, context.defaults);
  const made = textsOf(body.template, body.messages, {
    smartEncoding: options.smartEncoding,
    maxSegments: context.maxSegments,
  });
  if (made.problems.length > 0) throw new ApiError("validation", made.problems);
  return { body, options, texts: made.texts.filter((text): text is BatchText => text !== null) };
}

export function sendBatch(deps: IntakeDeps): RequestHandler {
  const schema = batchBody(deps.config.BULK_MAX_RECIPIENTS);
  return async (req, res) => {
    const idempotencyKey = idempotencyKeyOf(req);
    const { body, options, texts } = parseBatch(schema, req.body, {
      defaults: res.locals.sendDefaults,
      maxSegments: deps.config.MAX_SEGMENTS,
    });
    const out = await accept(deps, {
      endpoint: "sms/batch",
      idempotencyKey,
      rawBody: req.body,
      locals: res.locals,
      send: {
        recipients: body.messages.map((m) => m.to),
        from: body.from,
        message: "",
        texts: texts.map((t) => t.sent),
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
