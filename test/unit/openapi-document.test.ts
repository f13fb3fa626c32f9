import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.ts";
import { openApiDocument } from "../../src/intake/openapi/document.ts";
import { endpoint } from "../../src/intake/openapi/endpoint.ts";

/** The document builder on entries written for the test: what an entry turns into. */
const config = loadConfig({});
const csvExport = endpoint({
  method: "get",
  path: "/api/v1/things/{id}/export",
  operationId: "exportThings",
  summary: "Things as CSV",
  tag: "Messages",
  origin: "extension",
  errors: "kit",
  request: {
    path: z.object({ id: z.uuid() }),
    query: z.object({ since: z.string().optional().meta({ description: "from when" }) }),
  },
  responses: {
    200: {
      description: "The CSV.",
      body: z.string(),
      contentType: "text/csv",
      headers: z.object({ "Content-Disposition": z.string().meta({ description: "a file name" }) }),
    },
  },
  failures: ["notFound"],
});

const at = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>(
    (v, p) => (v && typeof v === "object" ? (v as Record<string, unknown>)[p] : undefined),
    value,
  );

describe("the OpenAPI document builder", () => {
  it("turns an entry into an operation: parameters, media type, headers, and the errors it can answer", () => {
    const op = at(openApiDocument([csvExport], config), "paths", "/api/v1/things/{id}/export", "get");
    expect(at(op, "parameters")).toEqual([
      { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
      { name: "since", in: "query", required: false, description: "from when", schema: { type: "string" } },
    ]);
    expect(at(op, "responses", "200")).toEqual({
      description: "The CSV.",
      headers: {
        "Content-Disposition": { required: true, description: "a file name", schema: { type: "string" } },
        // Authenticated: rate limited, so its successes carry the limit's headers.
        "RateLimit-Limit": { $ref: "#/components/headers/RateLimit-Limit" },
        "RateLimit-Remaining": { $ref: "#/components/headers/RateLimit-Remaining" },
        "RateLimit-Reset": { $ref: "#/components/headers/RateLimit-Reset" },
        "RateLimit-Policy": { $ref: "#/components/headers/RateLimit-Policy" },
      },
      content: { "text/csv": { schema: { type: "string" } } },
    });
    // No body: no 400/413 body errors. Authenticated: 401, 403 (the key's scopes or addresses), 429.
    // Everyone: 500, 503 with Retry-After.
    expect(Object.keys(at(op, "responses") as object)).toEqual([
      "200",
      "401",
      "403",
      "404",
      "429",
      "500",
      "503",
    ]);
    expect(Object.keys(at(op, "responses", "429", "headers") as object)).toEqual([
      "Retry-After",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
      "RateLimit-Policy",
    ]);
    expect(at(op, "responses", "503", "headers")).toEqual({
      "Retry-After": { $ref: "#/components/headers/Retry-After" },
    });
    expect(at(op, "responses", "404", "content", "application/json", "examples", "notFound")).toEqual({
      $ref: "#/components/examples/kit.notFound",
    });
  });

  it("an entry's own answer for a status wins over the catalogue's, and an open endpoint is not rate limited", () => {
    const probe = endpoint({
      ...csvExport,
      authenticated: false,
      responses: {
        200: { description: "up", body: z.object({ up: z.literal(true) }) },
        503: { description: "down", body: z.object({ up: z.literal(false) }) },
      },
      failures: [],
    });
    const op = at(openApiDocument([probe], config), "paths", "/api/v1/things/{id}/export", "get");
    expect(Object.keys(at(op, "responses") as object)).toEqual(["200", "500", "503"]);
    expect(at(op, "responses", "503", "description")).toBe("down");
    expect(at(op, "responses", "200", "headers")).toBeUndefined();
  });

  it("refuses two entries for one operation, or one operationId twice", () => {
    expect(() => openApiDocument([csvExport, csvExport], config)).toThrow(/two entries for GET/);
    const other = { ...csvExport, method: "post" as const };
    expect(() => openApiDocument([csvExport, other], config)).toThrow(/operationId exportThings used twice/);
  });

  it("refuses two different schemas under one component id", () => {
    const a = {
      ...csvExport,
      responses: { 200: { description: "a", body: z.object({ x: z.string() }).meta({ id: "Same" }) } },
    };
    const b = {
      ...csvExport,
      method: "post" as const,
      operationId: "other",
      responses: { 200: { description: "b", body: z.object({ y: z.int() }).meta({ id: "Same" }) } },
    };
    expect(() => openApiDocument([a, b], config)).toThrow(/two different schemas are named Same/);
  });
});
