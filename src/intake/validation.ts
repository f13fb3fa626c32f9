import { z } from "zod";
import { MESSAGE_EVENT_TYPES, type MessageEventType } from "../events/events.ts";
import { ApiError, type FieldError } from "./errors.ts";
import { SEND_AT_MAX_DAYS } from "./send-limits.ts";

/** Field-level texts a client can show as they are. */
export const requiredString = () =>
  z.string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") });

// C0 controls other than tab, newline, form feed and carriage return, and DEL: never part of a text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL_CHARS = /[\u0000-\u0008\u000B\u000E-\u001F\u007F]/;
// Spaces and invisible format characters (zero-width space, soft hyphen, BOM…): a text of these
// alone shows nothing on a handset, though trim() keeps the format characters.
const BLANK = /^[\s\p{Cf}]*$/u;
// A lone surrogate cannot be encoded on the wire.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The rules a text is held to, in the order their problems are told. */
const textRules = (maxLength: number): ReadonlyArray<readonly [(s: string) => boolean, string]> => [
  [(s) => !BLANK.test(s), "cannot be blank"],
  [(s) => s.length <= maxLength, `must be at most ${maxLength} characters`],
  [(s) => !CONTROL_CHARS.test(s), "must not contain control characters"],
  [(s) => !LONE_SURROGATE.test(s), "must be valid Unicode text"],
];

export const textField = (maxLength: number) =>
  textRules(maxLength)
    .reduce((field, [holds, message]) => field.refine(holds, message), requiredString())
    // What the checks above mean, for the OpenAPI document (refinements do not show there).
    .meta({ minLength: 1, maxLength, description: "not blank; no control characters" });

/** The first rule of textField a string breaks, or null: for texts made here (a filled template). */
export function textProblem(text: string, maxLength: number): string | null {
  for (const [holds, message] of textRules(maxLength)) if (!holds(text)) return message;
  return null;
}

/** A phone number: digits with an optional leading +, surrounding spaces ignored. */
export const msisdnField = () =>
  requiredString()
    .refine((s) => s.trim().length > 0, "cannot be blank")
    .refine((s) => /^\+?\d{3,20}$/.test(s.trim()), "must be a phone number in international format")
    .meta({
      pattern: "^\\s*\\+?\\d{3,20}\\s*$",
      description: "MSISDN in international format (optional +, 3 to 20 digits)",
      examples: ["+263771234567"],
    });

// Any C0 control or DEL: the URL parser drops or escapes them, but the URL is stored as given.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const URL_CONTROL_CHARS = /[\u0000-\u001F\u007F]/;
// The scheme and `//`, in any case. The URL parser also reads " http://x", "http:x", "http:/x" and
// "http:\\x" as http URLs; the URL is stored as written, so it must start as the database's check expects.
const HTTP_URL_START = /^https?:\/\//i;

/**
 * A callback URL: http or https only, as a send's webhook_url and the account webhook take it.
 * Kept as the client wrote it, so it must be storable text: no control character (Postgres
 * refuses a NUL) and no lone surrogate (it would be stored as U+FFFD, another URL). Only the
 * scheme is written in lower case: it is case-insensitive, and the database checks it in lower case.
 */
export const webhookUrlField = () =>
  z
    .string({ error: "must be a valid URL" })
    .max(2048, "must be at most 2048 characters")
    .refine(
      (s) =>
        HTTP_URL_START.test(s) && !URL_CONTROL_CHARS.test(s) && !LONE_SURROGATE.test(s) && URL.canParse(s),
      "must be a valid URL",
    )
    .meta({ format: "uri", maxLength: 2048, description: "an http or https URL" })
    .transform((s) => s.replace(HTTP_URL_START, (start) => start.toLowerCase()));

/**
 * A scheduled send's time: an RFC 3339 date-time with its offset (`Z` or `+02:00`), read as the
 * instant it names. How far ahead it may be is checked when the send is accepted (send-limits.ts).
 */
export const sendAtField = () =>
  z.iso
    .datetime({ offset: true, error: "must be an RFC 3339 date-time with a time zone offset" })
    .meta({
      description:
        "Extension: schedule the send for this instant, an RFC 3339 date-time with its offset, in the " +
        `future and at most ${SEND_AT_MAX_DAYS} days ahead. The charge is held at acceptance.`,
      examples: ["2026-12-01T09:00:00+02:00"],
    })
    .transform((s) => new Date(s));

/** What the words of a list's errors call one of its entries. */
interface Noun {
  one: string;
  article: "a" | "an";
}

/** Why a value is not a list of some of `choices`, each named at most once, or null when it is one. */
function choiceListProblem(value: unknown, choices: readonly string[], noun: Noun): string | null {
  const { one, article } = noun;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) return `must be an array of ${one}s`;
  if (value.length === 0) return `must name at least one ${one}`;
  if (value.some((v) => !choices.includes(v))) return `must contain only ${choices.join(", ")}`;
  if (new Set(value).size !== value.length) return `must not repeat ${article} ${one}`;
  return null;
}

/**
 * A non-empty list of distinct choices (event types, a key's scopes). Every problem is reported on
 * the field itself (not on an element), with one description.
 */
export const choiceListField = <T extends string>(choices: readonly T[], noun: Noun) =>
  z
    .custom<T[]>()
    .check((ctx) => {
      const problem = choiceListProblem(ctx.value, choices, noun);
      if (problem) ctx.issues.push({ code: "custom", message: problem, input: ctx.value });
    })
    // A custom check has no JSON Schema of its own: this is what it accepts.
    .meta({
      type: "array",
      items: { type: "string", enum: [...choices] },
      minItems: 1,
      uniqueItems: true,
    });

/**
 * The event types a webhook wants: a send's webhook takes its messages' types; the account
 * webhook every type.
 */
export const eventTypesField = <T extends string = MessageEventType>(
  types: readonly T[] = MESSAGE_EVENT_TYPES as readonly string[] as readonly T[],
) => choiceListField(types, { one: "event type", article: "an" });

/**
 * A send's webhook_events filters its own webhook_url; without one it would have nothing to
 * apply to (the account webhook keeps its own filter), so it is refused rather than ignored.
 */
export function webhookEventsNeedUrl(
  body: { webhook_url?: string | undefined; webhook_events?: unknown },
  ctx: z.RefinementCtx,
): void {
  if (body.webhook_events !== undefined && body.webhook_url === undefined)
    ctx.addIssue({ code: "custom", path: ["webhook_events"], message: "requires webhook_url" });
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function fieldName(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const part of path)
    out += typeof part === "number" ? `[${part}]` : out ? `.${String(part)}` : String(part);
  return out || "body";
}

/** zod issues as the contract's validation_errors entries. */
export function toFieldErrors(error: z.ZodError): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys)
        out.push({ field: fieldName([...issue.path, key]), description: "is not allowed" });
    } else if (issue.path.length === 0 && issue.code === "invalid_type") {
      out.push({ field: "body", description: "must be a JSON object" });
    } else {
      out.push({ field: fieldName(issue.path), description: issue.message });
    }
  }
  return out;
}

/** Parses a request body or throws the validation error in the route's convention. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body ?? {});
  if (!result.success) throw new ApiError("validation", toFieldErrors(result.error));
  return result.data;
}
