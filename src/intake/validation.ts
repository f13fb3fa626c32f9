import { z } from "zod";
import { ApiError, type FieldError } from "./errors.ts";

/** Field-level texts a client can show as they are. */
export const requiredString = () =>
  z.string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") });

// C0 controls other than tab, newline, form feed and carriage return, and DEL: never part of a text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL_CHARS = /[\u0000-\u0008\u000B\u000E-\u001F\u007F]/;
// A lone surrogate cannot be encoded on the wire.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const textField = (maxLength: number) =>
  requiredString()
    .refine((s) => s.trim().length > 0, "cannot be blank")
    .refine((s) => s.length <= maxLength, `must be at most ${maxLength} characters`)
    .refine((s) => !CONTROL_CHARS.test(s), "must not contain control characters")
    .refine((s) => !LONE_SURROGATE.test(s), "must be valid Unicode text");

/** A phone number: digits with an optional leading +, surrounding spaces ignored. */
export const msisdnField = () =>
  requiredString()
    .refine((s) => s.trim().length > 0, "cannot be blank")
    .refine((s) => /^\+?\d{3,20}$/.test(s.trim()), "must be a phone number in international format");

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
