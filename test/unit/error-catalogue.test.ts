import { describe, expect, it } from "vitest";
import { ERRORS, type ErrorName, errorBody } from "../../src/intake/errors.ts";

/**
 * The contract's error table, transcribed row by row: status, convention, code and texts.
 * The catalogue must say exactly this for each row.
 */
const CONTRACT: {
  row: string;
  name: ErrorName;
  status: number;
  shape: "legacy" | "kit";
  code: string;
  message?: string;
  description?: string;
}[] = [
  {
    row: "single send, unapproved from",
    name: "unapprovedSender",
    status: 400,
    shape: "legacy",
    code: "ERR_BAD_REQUEST",
    message: "unknown or unapproved sender id",
    description: "unknown or unapproved sender id",
  },
  {
    row: "single send, malformed JSON",
    name: "malformedJson",
    status: 400,
    shape: "legacy",
    code: "ERR_BAD_REQUEST",
  },
  {
    row: "retrieve, invalid UUID",
    name: "invalidSmsId",
    status: 400,
    shape: "legacy",
    code: "ERR_BAD_REQUEST",
    message: "invalid sms id",
    description: "invalid sms id",
  },
  {
    row: "bulk, validation failed",
    name: "validation",
    status: 400,
    shape: "kit",
    code: "VALIDATION_ERROR",
    message: "Validation failed",
    description: "One or more fields failed validation",
  },
  {
    row: "create key, name missing",
    name: "validation",
    status: 400,
    shape: "kit",
    code: "VALIDATION_ERROR",
  },
  {
    row: "revoke, invalid UUID",
    name: "invalidTokenId",
    status: 400,
    shape: "kit",
    code: "BAD_REQUEST",
    message: "invalid token id",
    description: "invalid token id",
  },
  {
    row: "401, no key",
    name: "missingAuthentication",
    status: 401,
    shape: "kit",
    code: "UNAUTHORIZED",
    message: "missing authentication",
    description: "missing authentication",
  },
  {
    row: "401, malformed or revoked key",
    name: "invalidAuthentication",
    status: 401,
    shape: "kit",
    code: "UNAUTHORIZED",
    message: "missing authentication",
  },
  {
    row: "retrieve, not found",
    name: "smsNotFound",
    status: 404,
    shape: "legacy",
    code: "err_not_found",
    message: "not found",
    description: "the resource does not exist",
  },
  {
    row: "bulk, insufficient balance",
    name: "insufficientBalance",
    status: 422,
    shape: "kit",
    code: "UNPROCESSABLE_ENTITY",
    message: "insufficient balance",
    description: "insufficient balance",
  },
  // The design brief's decision for the single send, where the contract is silent.
  {
    row: "single send, insufficient balance",
    name: "insufficientBalance",
    status: 422,
    shape: "legacy",
    code: "ERR_INSUFFICIENT_BALANCE",
    message: "insufficient balance",
    description: "insufficient balance",
  },
  { row: "revoke, unknown id (design)", name: "notFound", status: 404, shape: "kit", code: "NOT_FOUND" },
];

describe("error catalogue against the contract's error table", () => {
  it.each(CONTRACT)("$row", ({ name, status, shape, code, message, description }) => {
    expect(ERRORS[name].status).toBe(status);
    const body = errorBody(name, shape);
    if (shape === "legacy") {
      expect(body).toMatchObject({ status: "", error: { type: code } });
      expect(body.error).not.toHaveProperty("code");
    } else {
      expect(body).toMatchObject({ status: "error", error: { code } });
      expect(body.error).not.toHaveProperty("type");
    }
    if (message !== undefined) expect(body.message).toBe(message);
    if (description !== undefined) expect(body.error.description).toBe(description);
  });

  it("401 is always in the Kit shape, even on a legacy endpoint", () => {
    expect(errorBody("missingAuthentication", "legacy")).toMatchObject({
      status: "error",
      error: { code: "UNAUTHORIZED" },
    });
  });

  it("validation_errors appear only when there are some", () => {
    expect(errorBody("validation", "kit").error).not.toHaveProperty("validation_errors");
    expect(
      errorBody("validation", "kit", [{ field: "to", description: "is required" }]).error,
    ).toHaveProperty("validation_errors", [{ field: "to", description: "is required" }]);
  });

  it("every entry has texts in at least one convention and a 4xx/5xx status", () => {
    for (const [name, entry] of Object.entries(ERRORS)) {
      expect(entry.status, name).toBeGreaterThanOrEqual(400);
      expect("legacy" in entry || "kit" in entry, name).toBe(true);
    }
  });
});
