import type { RequestHandler } from "express";
import { z } from "zod";
import { EVENT_TYPES } from "../../events/events.ts";
import {
  deleteAccountWebhook,
  getAccountWebhook,
  MAX_WEBHOOK_BATCH_SIZE,
  putAccountWebhook,
  rotateSigningSecret,
} from "../../webhooks/account-webhooks.ts";
import type { IntakeDeps } from "../deps.ts";
import { kitDone, kitEnvelope, timestamp } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { eventTypesField, parseBody, webhookUrlField } from "../validation.ts";

const BATCH_SIZE_RULE = `must be an integer from 1 to ${MAX_WEBHOOK_BATCH_SIZE}`;

/**
 * The account webhook (an extension, Kit conventions): where events of sends without their own
 * webhook_url go, which event types it wants (all unless `events` names some), how many events a
 * request carries, and the signing secret of every callback of the account.
 */
export const putWebhookBody = z
  .object({
    url: z
      .string({ error: (i) => (i.input === undefined ? "is required" : "must be a valid URL") })
      .pipe(webhookUrlField())
      .meta({ format: "uri", maxLength: 2048, description: "an http or https URL" }),
    events: eventTypesField(EVENT_TYPES).optional(),
    batch_size: z
      .number({ error: BATCH_SIZE_RULE })
      .int({ error: BATCH_SIZE_RULE })
      .min(1, { error: BATCH_SIZE_RULE })
      .max(MAX_WEBHOOK_BATCH_SIZE, { error: BATCH_SIZE_RULE })
      .optional()
      .meta({
        description:
          `Events one callback request carries at most, 1 to ${MAX_WEBHOOK_BATCH_SIZE} (default 1). Above 1, the ` +
          "events bound for this webhook go together: the body is a JSON array of events and the " +
          "Shiri-Event-Count header replaces Shiri-Event-Id and Shiri-Event-Type.",
      }),
  })
  .strict();

const ONCE = "save the signing secret now, it is returned only once";
const SAVED = "webhook saved";
const DELETED = "webhook deleted";

/** GET /api/v1/webhook — the registered URL (or null), its event types, whether a secret exists. */
export function getWebhook(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    const webhook = await getAccountWebhook(deps.pool, res.locals.accountId);
    res.status(200).json({ status: "success", message: "request successful", data: webhook });
  };
}

/** PUT /api/v1/webhook — registers or replaces URL and events; the first answer carries the secret. */
export function putWebhook(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const { url, events, batch_size } = parseBody(putWebhookBody, req.body);
    const webhook = await putAccountWebhook(deps.pool, res.locals.accountId, {
      url,
      events: events ?? null,
      batchSize: batch_size ?? 1,
    });
    const message = webhook.signing_secret ? `${SAVED}: ${ONCE}` : SAVED;
    res.status(200).json({ status: "success", message, data: webhook });
  };
}

/** DELETE /api/v1/webhook — idempotent; events already recorded still go where they were bound. */
export function deleteWebhook(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    await deleteAccountWebhook(deps.pool, res.locals.accountId);
    res.status(200).json({ status: "success", message: DELETED });
  };
}

/** POST /api/v1/webhook/secret — a new signing secret, effective at once, returned once. */
export function rotateWebhookSecret(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    const secret = await rotateSigningSecret(deps.pool, res.locals.accountId);
    res.status(201).json({ status: "success", message: `signing secret created: ${ONCE}`, data: secret });
  };
}

const eventTypes = () => z.array(z.enum(EVENT_TYPES as [string, ...string[]]));

export const webhookSchema = z
  .object({
    url: z.string().nullable().meta({ description: "The account webhook; null when none is registered." }),
    events: eventTypes().meta({
      description:
        "The event types it receives: all of them (the message events, message.received and the contact " +
        "events) unless a PUT named some.",
    }),
    batch_size: z
      .number()
      .int()
      .meta({ description: "Events one callback request carries at most (1: one each)." }),
    signing_secret_set: z.boolean(),
    secret_created_at: timestamp().nullable(),
    updated_at: timestamp().nullable(),
  })
  .meta({ id: "Webhook" });

export const savedWebhookSchema = webhookSchema
  .extend({
    signing_secret: z.string().optional().meta({
      description: "Only in the first answer that reveals the secret (a PUT that creates it); shown once.",
    }),
  })
  .meta({ id: "SavedWebhook" });

export const signingSecretSchema = z
  .object({ signing_secret: z.string().meta({ examples: ["whsec_…"] }), secret_created_at: timestamp() })
  .meta({ id: "SigningSecret" });

const common = { tag: "Webhooks", origin: "extension", errors: "kit" } as const;

export const getWebhookEndpoint = endpoint({
  ...common,
  method: "get",
  path: "/api/v1/webhook",
  operationId: "getWebhook",
  summary: "The account webhook",
  responses: { 200: { description: "The webhook.", body: kitEnvelope(webhookSchema, "request successful") } },
  failures: [],
});

export const putWebhookEndpoint = endpoint({
  ...common,
  method: "put",
  path: "/api/v1/webhook",
  operationId: "putWebhook",
  summary: "Register or replace the account webhook",
  description:
    "Replaces the URL, the event filter and the batch size together (no events: all; no batch_size: 1). " +
    "Where events of sends without their own webhook_url go, from now on.",
  request: { body: putWebhookBody },
  responses: {
    200: {
      description: "Saved; the first answer carries the signing secret.",
      body: kitEnvelope(savedWebhookSchema, [SAVED, `${SAVED}: ${ONCE}`]),
    },
  },
  failures: ["validation"],
});

export const deleteWebhookEndpoint = endpoint({
  ...common,
  method: "delete",
  path: "/api/v1/webhook",
  operationId: "deleteWebhook",
  summary: "Remove the account webhook",
  description: "Idempotent; the signing secret is kept (sends' own webhook_urls still use it).",
  responses: { 200: { description: "Deleted (no data).", body: kitDone(DELETED) } },
  failures: [],
});

export const rotateWebhookSecretEndpoint = endpoint({
  ...common,
  method: "post",
  path: "/api/v1/webhook/secret",
  operationId: "rotateWebhookSecret",
  summary: "A new signing secret",
  description:
    "Effective at once; the previous secret (if it was ever shown) signs alongside it for " +
    "WEBHOOK_SECRET_GRACE_HOURS, as does each secret replaced within that time (the last five). " +
    "Creates the first secret if there is none.",
  responses: {
    201: {
      description: "The new secret, shown once.",
      body: kitEnvelope(signingSecretSchema, `signing secret created: ${ONCE}`),
    },
  },
  failures: [],
});
