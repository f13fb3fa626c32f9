import { z } from "zod";

/**
 * The two response conventions and the two error conventions, as schemas for the OpenAPI
 * document (docs/api.md defines them in words):
 * - legacy: POST /api/v1/sms answers the Message bare; errors are `{ status: "", message,
 *   error: { type, description, validation_errors? } }` (the single send and retrieve only);
 * - Kit: every other answer is `{ status: "success", message, data }`; errors are
 *   `{ status: "error", message, error: { code, description, validation_errors? } }`.
 */

/** One text, or one of a few, as the answer's `message`; any string when not given. */
function messageText(texts?: string | readonly [string, ...string[]]): z.ZodType<string> {
  if (texts === undefined) return z.string();
  return typeof texts === "string" ? z.literal(texts) : z.literal(texts);
}

/** The Kit envelope around `data`. */
export const kitEnvelope = <T extends z.ZodType>(
  data: T,
  message?: string | readonly [string, ...string[]],
) => z.object({ status: z.literal("success"), message: messageText(message), data });

/** A Kit answer with nothing to return: `{ status, message }`, no `data`. */
export const kitDone = (message: string) =>
  z.object({ status: z.literal("success"), message: z.literal(message) });

export const fieldErrorSchema = z
  .object({
    field: z.string().meta({ description: "the field at fault: `to`, `to[3]`, `webhook_events`, or `body`" }),
    description: z.string().meta({ description: "what is wrong with it, to show as is" }),
  })
  .meta({ id: "FieldError" });

/** The machine code: any string, or, for one response, the codes it can carry. */
const codeOf = (codes?: readonly string[]): z.ZodType<string> =>
  (codes && codes.length > 0 ? z.enum(codes as [string, ...string[]]) : z.string()).meta({
    description: "the machine-readable code",
  });

/**
 * A component id per shape and set of codes (`LegacyError_ERR_BAD_REQUEST`,
 * `KitError_BAD_REQUEST_VALIDATION_ERROR`): the responses that can carry the same codes share one
 * schema, and a generated client one type.
 */
const errorId = (shape: string, codes?: readonly string[]) =>
  codes && codes.length > 0 ? `${shape}_${codes.join("_")}` : shape;

/**
 * The legacy error shape: POST /api/v1/sms and GET /api/v1/sms/{id} (but 401, always Kit). Given
 * codes, the shape of a response that can carry only those. Each response's schema is the whole
 * shape, never a base schema and a refinement combined with allOf: a validator that treats
 * undeclared fields as errors (unevaluatedProperties: false, as Redocly's linter does and a strict
 * gateway may) judges each allOf branch alone and would refuse `description` in every real error.
 */
export const legacyErrorSchema = (codes?: readonly string[]) =>
  z
    .object({
      status: z.literal("").meta({ description: "always the empty string" }),
      message: z.string(),
      error: z.object({
        type: codeOf(codes),
        description: z.string(),
        validation_errors: z.array(fieldErrorSchema).optional(),
      }),
    })
    .meta({ id: errorId("LegacyError", codes), description: "The legacy error shape (`error.type`)." });

/** The Kit error shape: every other endpoint, and every 401; narrowed to codes as above. */
export const kitErrorSchema = (codes?: readonly string[]) =>
  z
    .object({
      status: z.literal("error"),
      message: z.string(),
      error: z.object({
        code: codeOf(codes),
        description: z.string(),
        validation_errors: z.array(fieldErrorSchema).optional(),
      }),
    })
    .meta({ id: errorId("KitError", codes), description: "The Kit error shape (`error.code`)." });

/** An RFC 3339 timestamp as the API writes it (UTC, milliseconds, `Z`). */
export const timestamp = () => z.iso.datetime();

/** An amount in ten-thousandths of its currency, as a JSON integer (bulk, balance). */
export const amount = () => z.int().nonnegative().meta({ format: "int64" });
