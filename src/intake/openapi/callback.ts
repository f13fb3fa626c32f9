import { z } from "zod";
import { MAX_WEBHOOK_BATCH_SIZE } from "../../webhooks/account-webhooks.ts";
import { MESSAGE_EVENT_TYPES } from "../../webhooks/events.ts";
import { messageSchema } from "../message-view.ts";
import { timestamp } from "./conventions.ts";

/** What a webhook receiver gets: the callback's body and headers (src/webhooks, docs/api.md). */
export const callbackEventSchema = z
  .object({
    id: z.uuid().meta({ description: "The event id: the same on every retry; deduplicate on it." }),
    type: z.enum(MESSAGE_EVENT_TYPES as [string, ...string[]]),
    created_at: timestamp().meta({ description: "When the change happened." }),
    // The Message as GET /api/v1/sms/{id} showed it then.
    data: messageSchema,
  })
  .meta({ id: "CallbackEvent" });

/** One event, or, to an account webhook with a batch_size above 1, always an array of them. */
export const callbackBodySchema = z
  .union([callbackEventSchema, z.array(callbackEventSchema).min(1).max(MAX_WEBHOOK_BATCH_SIZE)])
  .meta({ id: "CallbackBody" });

export const callbackHeaders = z.object({
  "Shiri-Signature": z.string().meta({
    description:
      '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the signing secret>`; ' +
      "one v1 per secret during a rotation's grace period, the new one first.",
    examples: ["t=1740821412,v1=5f2b…"],
  }),
  "Shiri-Event-Id": z
    .uuid()
    .optional()
    .meta({ description: "The event id, as in the body; not on a batch." }),
  "Shiri-Event-Type": z
    .enum(MESSAGE_EVENT_TYPES as [string, ...string[]])
    .optional()
    .meta({ description: "The event type, as in the body; not on a batch." }),
  "Shiri-Event-Count": z
    .string()
    .optional()
    .meta({ description: "On a batch only: how many events the array holds.", pattern: "^[1-9][0-9]*$" }),
});
