import type { Response } from "express";
import { sendJson } from "./json-response.ts";

/**
 * Every error the API can answer, in one catalogue: its HTTP status and, per error convention,
 * its machine code and texts. The contract has two conventions; each endpoint names its own,
 * and an error only exists in the conventions whose endpoints can raise it.
 */
export type ErrorShape = "legacy" | "kit";

interface Texts {
  code: string;
  message: string;
  description: string;
}
export interface ErrorEntry {
  status: number;
  legacy?: Texts;
  kit?: Texts;
}

const both = (legacyType: string, kitCode: string, message: string, description = message) => ({
  legacy: { code: legacyType, message, description },
  kit: { code: kitCode, message, description },
});

export const ERRORS = {
  missingAuthentication: {
    status: 401,
    kit: { code: "UNAUTHORIZED", message: "missing authentication", description: "missing authentication" },
  },
  invalidAuthentication: {
    status: 401,
    kit: {
      code: "UNAUTHORIZED",
      message: "missing authentication",
      description: "invalid or revoked api key",
    },
  },
  // A key that may not do this, or not from here: 403 in the endpoint's own shape (extension).
  forbiddenScope: {
    status: 403,
    ...both(
      "ERR_FORBIDDEN",
      "FORBIDDEN",
      "forbidden",
      "the api key's scopes do not include what this endpoint needs",
    ),
  },
  forbiddenAddress: {
    status: 403,
    ...both("ERR_FORBIDDEN", "FORBIDDEN", "forbidden", "the api key may not be used from this address"),
  },
  beyondOwnKey: {
    status: 403,
    kit: {
      code: "FORBIDDEN",
      message: "forbidden",
      description: "a key cannot grant or revoke more than it holds itself",
    },
  },
  malformedJson: { status: 400, ...both("ERR_BAD_REQUEST", "BAD_REQUEST", "malformed JSON body") },
  unreadableBody: {
    status: 400,
    ...both(
      "ERR_BAD_REQUEST",
      "BAD_REQUEST",
      "unreadable request body",
      "the body could not be decoded: check Content-Type charset and Content-Encoding",
    ),
  },
  notJson: {
    status: 400,
    ...both(
      "ERR_BAD_REQUEST",
      "BAD_REQUEST",
      "body is not JSON",
      "the body must be JSON, sent with Content-Type: application/json",
    ),
  },
  payloadTooLarge: {
    status: 413,
    ...both("ERR_PAYLOAD_TOO_LARGE", "PAYLOAD_TOO_LARGE", "request body too large"),
  },
  validation: {
    status: 400,
    legacy: {
      code: "ERR_BAD_REQUEST",
      message: "invalid request",
      description: "one or more fields failed validation",
    },
    kit: {
      code: "VALIDATION_ERROR",
      message: "Validation failed",
      description: "One or more fields failed validation",
    },
  },
  unapprovedSender: {
    status: 400,
    legacy: {
      code: "ERR_BAD_REQUEST",
      message: "unknown or unapproved sender id",
      description: "unknown or unapproved sender id",
    },
  },
  invalidSmsId: {
    status: 400,
    legacy: { code: "ERR_BAD_REQUEST", message: "invalid sms id", description: "invalid sms id" },
    // DELETE /api/v1/sms/{id} (extension) answers in the Kit shape.
    kit: { code: "BAD_REQUEST", message: "invalid sms id", description: "invalid sms id" },
  },
  invalidBulkId: {
    status: 400,
    kit: { code: "BAD_REQUEST", message: "invalid bulk id", description: "invalid bulk id" },
  },
  notCancellable: {
    status: 409,
    kit: {
      code: "CONFLICT",
      message: "already dispatched",
      description: "the message was already dispatched or has ended: it can no longer be cancelled",
    },
  },
  // Redelivery of a callback event a 410 Gone ended (extension; docs/decisions/0004).
  refusedByReceiver: {
    status: 409,
    kit: {
      code: "CONFLICT",
      message: "refused by the receiver",
      description: "the receiver answered 410 Gone to this event's URL: the event is never sent again",
    },
  },
  smsNotFound: {
    status: 404,
    legacy: { code: "err_not_found", message: "not found", description: "the resource does not exist" },
  },
  insufficientBalance: {
    status: 422,
    legacy: {
      code: "ERR_INSUFFICIENT_BALANCE",
      message: "insufficient balance",
      description: "insufficient balance",
    },
    kit: {
      code: "UNPROCESSABLE_ENTITY",
      message: "insufficient balance",
      description: "insufficient balance",
    },
  },
  invalidTokenId: {
    status: 400,
    kit: { code: "BAD_REQUEST", message: "invalid token id", description: "invalid token id" },
  },
  notFound: {
    status: 404,
    kit: { code: "NOT_FOUND", message: "not found", description: "the resource does not exist" },
  },
  invalidIdempotencyKey: {
    status: 400,
    ...both(
      "ERR_BAD_REQUEST",
      "BAD_REQUEST",
      "invalid Idempotency-Key header",
      "the Idempotency-Key header must be 1 to 255 visible ASCII characters",
    ),
  },
  idempotencyConflict: {
    status: 409,
    ...both(
      "ERR_CONFLICT",
      "CONFLICT",
      "idempotency key reused",
      "this Idempotency-Key was already used with a different request body",
    ),
  },
  tooManyRequests: {
    status: 429,
    ...both(
      "ERR_TOO_MANY_REQUESTS",
      "TOO_MANY_REQUESTS",
      "too many requests",
      "rate limit exceeded: retry after the number of seconds in Retry-After",
    ),
  },
  tooManyExpensive: {
    status: 429,
    kit: {
      code: "TOO_MANY_REQUESTS",
      message: "too many searches and exports in flight",
      description:
        "too many searches and exports in flight: retry after the number of seconds in Retry-After",
    },
  },
  tooManyAuthFailures: {
    status: 429,
    kit: {
      code: "TOO_MANY_REQUESTS",
      message: "too many failed authentications",
      description:
        "too many failed authentications from this address: retry after the number of seconds in Retry-After",
    },
  },
  unavailable: {
    status: 503,
    ...both("ERR_SERVICE_UNAVAILABLE", "SERVICE_UNAVAILABLE", "service unavailable, try again shortly"),
  },
  internal: { status: 500, ...both("ERR_INTERNAL", "INTERNAL_ERROR", "internal error") },
  // Refused by Node's HTTP parser before any route sees the request (client-errors.ts).
  malformedRequest: {
    status: 400,
    kit: {
      code: "BAD_REQUEST",
      message: "malformed HTTP request",
      description: "the request line or a header could not be read",
    },
  },
  requestTimeout: {
    status: 408,
    kit: {
      code: "REQUEST_TIMEOUT",
      message: "request timeout",
      description: "the request was not received in time",
    },
  },
  headersTooLarge: {
    status: 431,
    kit: {
      code: "REQUEST_HEADER_FIELDS_TOO_LARGE",
      message: "request headers too large",
      description: "the request line and headers are over 16 KiB",
    },
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorName = keyof typeof ERRORS;

export interface FieldError {
  field: string;
  description: string;
}

export type ErrorBody =
  | {
      status: "";
      message: string;
      error: { type: string; description: string; validation_errors?: FieldError[] };
    }
  | {
      status: "error";
      message: string;
      error: { code: string; description: string; validation_errors?: FieldError[] };
    };

/** The body of an error in the given convention; falls back to the one the error exists in. */
export function errorBody(name: ErrorName, shape: ErrorShape, validationErrors?: FieldError[]): ErrorBody {
  const entry: ErrorEntry = ERRORS[name];
  const useKit = shape === "kit" ? entry.kit !== undefined : entry.legacy === undefined;
  const texts = (useKit ? entry.kit : entry.legacy) as Texts;
  const extra =
    validationErrors && validationErrors.length > 0 ? { validation_errors: validationErrors } : {};
  return useKit
    ? {
        status: "error",
        message: texts.message,
        error: { code: texts.code, description: texts.description, ...extra },
      }
    : {
        status: "",
        message: texts.message,
        error: { type: texts.code, description: texts.description, ...extra },
      };
}

/** An error a handler throws; the error middleware answers it in the route's convention. */
export class ApiError extends Error {
  constructor(
    readonly errorName: ErrorName,
    readonly validationErrors?: FieldError[],
  ) {
    super(errorName);
  }
}

/** How long a client is asked to wait before retrying a 503: a dropped connection is back in about that. */
export const RETRY_AFTER_SECONDS = 2;

export function sendError(res: Response, name: ErrorName, validationErrors?: FieldError[]): void {
  const shape: ErrorShape = res.locals.errorShape ?? "kit";
  if (ERRORS[name].status === 503) res.setHeader("Retry-After", String(RETRY_AFTER_SECONDS));
  sendJson(res, ERRORS[name].status, errorBody(name, shape, validationErrors));
}
