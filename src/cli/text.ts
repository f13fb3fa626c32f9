import { CARRIERS, OPERATORS } from "../../carriers/index.ts";
import { loadConfig } from "../config.ts";
import { canonicalTimeZone, type DeliveryWindow, TIME_OF_DAY } from "../domain/delivery-window.ts";
import { smartEncode } from "../domain/look-alikes.ts";
import { priceMessage } from "../domain/pricing.ts";
import { countSegments } from "../domain/segments.ts";
import { fillTemplate, isWrittenExactly, parseTemplate } from "../domain/templates.ts";
import { scheduleOf } from "../sending/prepare-send.ts";
import { CommandError, type LocalCommand, type ParsedArgs, stringOption, UsageError } from "./args.ts";

/**
 * `shiri text`: how a text would be sent, worked out from the words alone (no database), as the
 * send endpoints work it out (issue 30): a template filled in, look-alike characters replaced, the
 * encoding, segments and price per operator, and when it would go and expire under a delivery
 * window and a validity period. For the operator answering "why did this cost three segments?".
 */
const WINDOW = /^(\d{2}:\d{2})-(\d{2}:\d{2})$/;

function variablesOf(args: ParsedArgs): Record<string, string | number> | null {
  const text = stringOption(args, "variables");
  if (text === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError('--variables must be a JSON object, e.g. \'{"name":"Rudo"}\'');
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new UsageError('--variables must be a JSON object, e.g. \'{"name":"Rudo"}\'');
  const out: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== "string" && typeof value !== "number")
      throw new UsageError(`--variables: ${name} must be a string or a number`);
    // As the batch endpoint refuses it: the text would not be the digits given.
    if (typeof value === "number" && !isWrittenExactly(value))
      throw new UsageError(`--variables: ${name} must be a string: this number cannot be written exactly`);
    out[name] = value;
  }
  return out;
}

function windowOf(args: ParsedArgs): DeliveryWindow | null {
  const between = stringOption(args, "deliver-between");
  const zone = stringOption(args, "time-zone");
  if (between === undefined) {
    if (zone !== undefined) throw new UsageError("--time-zone goes with --deliver-between");
    return null;
  }
  const match = WINDOW.exec(between);
  const [start, end] = [match?.[1] ?? "", match?.[2] ?? ""];
  if (!match || !TIME_OF_DAY.test(start) || !TIME_OF_DAY.test(end) || start === end)
    throw new UsageError(`--deliver-between must be HH:MM-HH:MM with two different times, got "${between}"`);
  const timeZone = zone === undefined ? null : canonicalTimeZone(zone);
  if (timeZone === null) throw new UsageError("--deliver-between needs --time-zone, an IANA time zone name");
  return { start, end, time_zone: timeZone };
}

function validityOf(args: ParsedArgs): number | null {
  const text = stringOption(args, "validity-period");
  if (text === undefined) return null;
  const seconds = /^\d{1,6}$/.test(text) ? Number(text) : Number.NaN;
  if (!(seconds >= 60 && seconds <= 259_200))
    throw new UsageError(`--validity-period must be 60 to 259200 seconds, got "${text}"`);
  return seconds;
}

function sendAtOf(args: ParsedArgs): Date | null {
  const text = stringOption(args, "send-at");
  if (text === undefined) return null;
  const at = new Date(text);
  if (!/[zZ]|[+-]\d\d:\d\d$/.test(text) || Number.isNaN(at.getTime()))
    throw new UsageError(`--send-at must be an RFC 3339 date-time with its offset, got "${text}"`);
  return at;
}

export const TEXT_COMMANDS: readonly LocalCommand[] = [
  {
    kind: "local",
    name: "text",
    summary: "how a text would be sent: encoding, segments, price, smart encoding, template, window",
    details: [
      "Works it out as a send would, without a database: the MESSAGE (a template with {{name}}",
      "placeholders when --variables is given) filled in, its look-alike characters replaced with",
      "--smart-encoding (only when that makes it GSM-7), its encoding, segments and price per operator",
      "(ten-thousandths of --currency), and with --send-at, --deliver-between and --validity-period when",
      "it would go (send_at) and expire (expires_at). Exit 1 when the window opens after the validity ends.",
    ].join("\n"),
    positionals: [{ name: "MESSAGE", help: "the text, or a template with --variables" }],
    options: {
      variables: { type: "string", value: "JSON", help: "a batch item's variables, as a JSON object" },
      "smart-encoding": { type: "boolean", help: "replace look-alike characters when that makes it GSM-7" },
      currency: { type: "string", value: "CODE", help: "the currency of the prices (USD)" },
      "send-at": { type: "string", value: "TIME", help: "when it is scheduled (RFC 3339, with its offset)" },
      "validity-period": { type: "string", value: "SECONDS", help: "60 to 259200" },
      "deliver-between": { type: "string", value: "HH:MM-HH:MM", help: "the local hours it may go in" },
      "time-zone": { type: "string", value: "ZONE", help: "the window's IANA time zone" },
    },
    run: (args) => {
      const written = args.positionals[0] ?? "";
      const variables = variablesOf(args);
      const currency = (stringOption(args, "currency") ?? "USD").toUpperCase();
      const window = windowOf(args);
      const validityPeriod = validityOf(args);
      const sendAt = sendAtOf(args);
      let text = written;
      if (variables) {
        const template = parseTemplate(written);
        if ("invalid" in template) throw new UsageError(`${template.invalid} is not a placeholder`);
        const filled = fillTemplate(template, variables);
        if ("missing" in filled) throw new CommandError(`the template needs ${filled.missing.join(", ")}`);
        text = filled.text;
      }
      if (text.trim() === "") throw new UsageError("MESSAGE is blank");
      const smart = args.values["smart-encoding"] === true ? smartEncode(text) : null;
      const sent = smart?.text ?? text;
      const plan = countSegments(sent);
      const prices = Object.fromEntries(
        OPERATORS.filter((op) => Object.hasOwn(CARRIERS[op].pricePerSegment, currency)).map((op) => [
          op,
          priceMessage(op, plan.segments, currency),
        ]),
      );
      if (Object.keys(prices).length === 0)
        throw new UsageError(`--currency ${currency} is not priced by any carrier`);
      const now = new Date();
      const schedule = scheduleOf(now, {
        sendAt,
        validityPeriod,
        deliverBetween: window,
        // Only a window's delay without a validity_period takes the configured one: read only then.
        validityHours: window && validityPeriod === null ? loadConfig().MESSAGE_VALIDITY_HOURS : 24,
      });
      if (schedule.sendAt && schedule.expiresAt && schedule.sendAt.getTime() >= schedule.expiresAt.getTime())
        throw new CommandError(
          `the window opens at ${schedule.sendAt.toISOString()}, after the validity ends (${schedule.expiresAt.toISOString()})`,
        );
      return {
        ...(variables ? { template: written } : {}),
        message: sent,
        ...(smart ? { message_as_written: text, smart_encoded: true, replaced: smart.replaced } : {}),
        encoding: plan.encoding,
        segments: plan.segments,
        units: plan.units,
        currency,
        charge: prices,
        ...(schedule.sendAt ? { send_at: schedule.sendAt.toISOString() } : {}),
        ...(schedule.expiresAt ? { expires_at: schedule.expiresAt.toISOString() } : {}),
        ...(validityPeriod ? { validity_period: validityPeriod } : {}),
        ...(window ? { deliver_between: window } : {}),
      };
    },
  },
];
