import { z } from "zod";
import { EVENT_TYPES, MESSAGE_EVENT_TYPES } from "../../events/events.ts";
import { MAX_WEBHOOK_BATCH_SIZE } from "../../webhooks/account-webhooks.ts";
import { messageSchema } from "../message-view.ts";
import { inboundMessageSchema } from "../routes/inbound.ts";
import { optOutSchema } from "../routes/opt-outs.ts";
import { timestamp } from "./conventions.ts";

const eventId = () =>
  z.uuid().meta({ description: "The event id: the same on every retry; deduplicate on it." });
const eventTime = () => timestamp().meta({ description: "When the change happened." });

/** What a webhook receiver gets: the callback's body and headers (src/webhooks, docs/api.md). */
export const messageEventSchema = z
  .object({
    id: eventId(),
    type: z.enum(MESSAGE_EVENT_TYPES as [string, ...string[]]),
    created_at: eventTime(),
    // The Message as GET /api/v1/sms/{id} showed it then.
    data: messageSchema,
  })
  .meta({ id: "MessageEvent", description: "A sent message's status or delivery changed." });

export const inboundMessageEventSchema = z
  .object({
    id: eventId(),
    type: z.literal("message.received"),
    created_at: eventTime(),
    data: inboundMessageSchema,
  })
  .meta({
    id: "InboundMessageEvent",
    description: "A handset's message to one of the account's inbound numbers.",
  });

export const contactEventSchema = z
  .object({
    id: eventId(),
    type: z.enum(["contact.opted_out", "contact.opted_in"]),
    created_at: eventTime(),
    data: z.object({
      number: optOutSchema.shape.number,
      at: timestamp().meta({ description: "When the number went on (or came off) the list." }),
      reason: optOutSchema.shape.reason,
      keyword: optOutSchema.shape.keyword,
      inbound_message_id: optOutSchema.shape.inbound_message_id,
    }),
  })
  .meta({ id: "ContactEvent", description: "A number went on or came off the account's opt-out list." });

/** Every event; the account webhook gets all three kinds, a send's webhook_url its messages' only. */
export const callbackEventSchema = z
  .union([messageEventSchema, inboundMessageEventSchema, contactEventSchema])
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
    .enum(EVENT_TYPES as [string, ...string[]])
    .optional()
    .meta({ description: "The event type, as in the body; not on a batch." }),
  "Shiri-Event-Count": z
    .string()
    .optional()
    .meta({ description: "On a batch only: how many events the array holds.", pattern: "^[1-9][0-9]*$" }),
});
