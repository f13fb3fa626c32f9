import type { RequestHandler } from "express";
import { z } from "zod";
import {
  deleteAccountWebhook,
  getAccountWebhook,
  putAccountWebhook,
  rotateSigningSecret,
} from "../../webhooks/account-webhooks.ts";
import type { IntakeDeps } from "../deps.ts";
import { eventTypesField, parseBody, webhookUrlField } from "../validation.ts";

/**
 * The account webhook (an extension, Kit conventions): where events of sends without their own
 * webhook_url go, which event types it wants (all unless `events` names some), and the signing
 * secret of every callback of the account.
 */
export const putWebhookBody = z
  .object({
    url: z
      .string({ error: (i) => (i.input === undefined ? "is required" : "must be a valid URL") })
      .pipe(webhookUrlField()),
    events: eventTypesField().optional(),
  })
  .strict();

const ONCE = "save the signing secret now, it is returned only once";

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
    const { url, events } = parseBody(putWebhookBody, req.body);
    const webhook = await putAccountWebhook(deps.pool, res.locals.accountId, { url, events: events ?? null });
    const message = webhook.signing_secret ? `webhook saved: ${ONCE}` : "webhook saved";
    res.status(200).json({ status: "success", message, data: webhook });
  };
}

/** DELETE /api/v1/webhook — idempotent; events already recorded still go where they were bound. */
export function deleteWebhook(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    await deleteAccountWebhook(deps.pool, res.locals.accountId);
    res.status(200).json({ status: "success", message: "webhook deleted" });
  };
}

/** POST /api/v1/webhook/secret — a new signing secret, effective at once, returned once. */
export function rotateWebhookSecret(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    const secret = await rotateSigningSecret(deps.pool, res.locals.accountId);
    res.status(201).json({ status: "success", message: `signing secret created: ${ONCE}`, data: secret });
  };
}
