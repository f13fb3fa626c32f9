import { z } from "zod";
import type { SendDefaults } from "../accounts/send-defaults.ts";
import { canonicalTimeZone, type DeliveryWindow, TIME_OF_DAY } from "../domain/delivery-window.ts";
import { smartEncode } from "../domain/look-alikes.ts";
import { VALIDITY_PERIOD_MAX, VALIDITY_PERIOD_MIN } from "../sending/prepare-send.ts";
import type { FieldError } from "./errors.ts";

/**
 * The options every send endpoint takes (issue 30; extensions in the Kit conventions): smart
 * encoding, a validity period and a delivery window, each also given by the account's defaults
 * where it has one. Validated here, resolved against the defaults, then carried by the send.
 */

const timeOfDay = (what: string) =>
  z
    .string({
      error: (issue) => (issue.input === undefined ? "is required" : "must be a time of day as HH:MM"),
    })
    .regex(TIME_OF_DAY, "must be a time of day as HH:MM (00:00 to 23:59)")
    .meta({ description: what, examples: ["08:00"] });

const timeZone = z
  .string({
    error: (issue) => (issue.input === undefined ? "is required" : "must be an IANA time zone name"),
  })
  .refine((s) => canonicalTimeZone(s) !== null, "must be an IANA time zone name, such as Africa/Harare")
  .transform((s) => canonicalTimeZone(s) ?? s)
  .meta({
    description: "An IANA time zone name; its daylight saving rules apply.",
    examples: ["Africa/Harare"],
  });

/** A delivery window as the API takes it; `end` before `start` spans midnight. */
export const deliveryWindowSchema = z
  .object(
    {
      start: timeOfDay("Local time the window opens (inclusive), HH:MM."),
      end: timeOfDay("Local time the window closes (exclusive), HH:MM; before start, it spans midnight."),
      time_zone: timeZone,
    },
    { error: "must be an object with start, end and time_zone" },
  )
  .strict()
  .refine((w) => w.start !== w.end, { path: ["end"], message: "must differ from start" })
  .meta({ id: "DeliveryWindow" });

export const sendOptionsShape = {
  smart_encoding: z
    .boolean({ error: "must be true or false" })
    .meta({
      description:
        "Extension: replace look-alike characters (curly quotes, dashes, special spaces, the ellipsis…) by " +
        "GSM-7 ones when that makes the whole text GSM-7 (docs/smart-encoding.md); the charge is for the " +
        "text as sent. Absent: the account's default (off unless set).",
    })
    .optional(),
  validity_period: z
    .int({ error: "must be a whole number of seconds" })
    .min(VALIDITY_PERIOD_MIN, `must be at least ${VALIDITY_PERIOD_MIN} seconds`)
    .max(VALIDITY_PERIOD_MAX, `must be at most ${VALIDITY_PERIOD_MAX} seconds (3 days)`)
    .meta({
      description:
        "Extension: seconds the message may wait to be accepted by a carrier, counted from when it is due " +
        "(send_at, else acceptance), and passed to the SMSC as its validity period. Past it, a message no " +
        "carrier accepted ends failed with operator_response EXPIRED and its hold released. Absent: the " +
        "service's MESSAGE_VALIDITY_HOURS.",
    })
    .optional(),
  deliver_between: deliveryWindowSchema
    .nullable()
    .meta({
      description:
        "Extension: the local hours in which the message may be sent. Accepted outside them, it waits for " +
        "the window's next start (send_at then says when), never past its validity: a window that opens " +
        "only after the validity ends is refused. null: no window, even when the account has a default one. " +
        "Absent: the account's default window, if any.",
    })
    .optional(),
};

export interface SendOptions {
  smartEncoding: boolean;
  /** Seconds, or null for the service's MESSAGE_VALIDITY_HOURS. */
  validityPeriod: number | null;
  deliverBetween: DeliveryWindow | null;
}

/** What the body says, else what the account's defaults say. */
export function sendOptionsOf(
  body: {
    smart_encoding?: boolean | undefined;
    validity_period?: number | undefined;
    deliver_between?: DeliveryWindow | null | undefined;
  },
  defaults: SendDefaults,
): SendOptions {
  return {
    smartEncoding: body.smart_encoding ?? defaults.smartEncoding,
    validityPeriod: body.validity_period ?? null,
    deliverBetween: body.deliver_between === undefined ? defaults.deliverBetween : body.deliver_between,
  };
}

/** A text as it is sent: its look-alikes replaced when smart encoding is on and that makes it GSM-7. */
export interface TextToSend {
  body: string;
  smartEncoded: boolean;
}

export function textToSend(text: string, smartEncoding: boolean): TextToSend {
  const encoded = smartEncoding ? smartEncode(text) : null;
  return encoded ? { body: encoded.text, smartEncoded: true } : { body: text, smartEncoded: false };
}

/**
 * A message waits for its window, never past its validity: a window whose next opening comes after
 * the expiry would hold the message (and its charge) only to fail it, so the send is refused.
 */
export function windowProblem(schedule: { sendAt: Date | null; expiresAt: Date | null }): FieldError | null {
  const { sendAt, expiresAt } = schedule;
  if (!sendAt || !expiresAt || sendAt.getTime() < expiresAt.getTime()) return null;
  return {
    field: "deliver_between",
    description: `opens at ${sendAt.toISOString()}, after the message's validity ends (${expiresAt.toISOString()}): widen the window, lengthen validity_period, or send with deliver_between null`,
  };
}
