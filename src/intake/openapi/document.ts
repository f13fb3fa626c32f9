import { z } from "zod";
import type { Config } from "../../config.ts";
import { ERRORS, type ErrorName, type ErrorShape, errorBody, RETRY_AFTER_SECONDS } from "../errors.ts";
import { callbackBodySchema, callbackHeaders } from "./callback.ts";
import { kitErrorSchema, legacyErrorSchema } from "./conventions.ts";
import type { Endpoint, Tag } from "./endpoint.ts";

/**
 * The OpenAPI 3.1 document, built from the endpoints' entries: their zod schemas become JSON
 * Schema (2020-12, OpenAPI 3.1's dialect) with z.toJSONSchema, and their error responses come
 * from the error catalogue itself, one example per error, exactly as the API answers it.
 */
export type JsonSchema = Record<string, unknown>;
type Json = Record<string, unknown>;

const TAGS: Record<Tag, string> = {
  Messages: "Sending SMS and reading messages back.",
  "API keys": "The keys that authenticate every request.",
  Account: "The account's balance and sender ids (extensions).",
  Inbound:
    "Two-way messaging: inbound numbers, the messages handsets send to them, and the opt-out list (extensions).",
  Webhooks: "The account webhook, its signing secret, and callback deliveries (extensions).",
  Health: "Liveness and readiness probes, outside the API's conventions (extensions).",
  Reference: "This document.",
};

const SCHEMA_OPTIONS = {
  target: "draft-2020-12",
  // Request schemas transform some fields (a date-time string into a Date): the document shows
  // what is sent. Response schemas have no transforms, and as input their objects stay open.
  io: "input",
  // A custom check (z.custom) has no JSON Schema: it says what it accepts in its .meta() (the
  // document test refuses an empty schema anywhere).
  unrepresentable: ({ zodSchema }) => (zodSchema._zod.def.type === "custom" ? "any" : "throw"),
  override: ({ jsonSchema }) => {
    // z.uuid() and z.iso.datetime() carry long patterns that only restate their format.
    if (typeof jsonSchema.format === "string") delete jsonSchema.pattern;
    // z.int() bounds itself to safe integers: noise next to the contract's int64.
    if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  },
} satisfies Parameters<typeof z.toJSONSchema>[1];

/** Schemas with an id (`.meta({ id })`) gathered as components, referenced from everywhere else. */
class Components {
  readonly schemas: Record<string, JsonSchema> = {};
  readonly examples: Record<string, Json> = {};

  /** A reference to a shared example (each error body is written once, used by many operations). */
  example(key: string, example: Json): Json {
    this.examples[key] = example;
    return { $ref: `#/components/examples/${key}` };
  }

  convert(schema: z.ZodType): JsonSchema {
    const { $schema: _dialect, $defs, ...json } = z.toJSONSchema(schema, SCHEMA_OPTIONS) as JsonSchema;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
      const moved = relink(def);
      const existing = this.schemas[id];
      if (existing && JSON.stringify(existing) !== JSON.stringify(moved))
        throw new Error(`two different schemas are named ${id}`);
      this.schemas[id] = moved;
    }
    return relink(json);
  }
}

const relink = (json: JsonSchema): JsonSchema =>
  JSON.parse(JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/'));

/** A zod object's fields as OpenAPI parameters of one location. */
function parameters(
  components: Components,
  location: "path" | "query" | "header",
  shape: z.ZodObject | undefined,
): Json[] {
  if (!shape) return [];
  const json = components.convert(shape);
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries((json.properties ?? {}) as Record<string, JsonSchema>).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return {
      name,
      in: location,
      required: location === "path" || required.has(name),
      ...(description === undefined ? {} : { description }),
      schema: rest,
    };
  });
}

/** What every endpoint can answer besides its own failures. */
function failuresOf(entry: Endpoint): ErrorName[] {
  const names: ErrorName[] = [];
  // Every authenticated request is rate limited (src/intake/rate-limit.ts).
  if (entry.authenticated !== false)
    names.push(
      "missingAuthentication",
      "invalidAuthentication",
      "forbiddenScope",
      "forbiddenAddress",
      "tooManyRequests",
      "tooManyAuthFailures",
    );
  if (entry.request?.body) names.push("malformedJson", "unreadableBody", "payloadTooLarge");
  names.push(...entry.failures, "unavailable", "internal");
  return [...new Set(names)];
}

/** On every answer the rate limits decided, 2xx and 429 alike (absent with RATE_LIMITS=off). */
const RATE_LIMIT_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy"];

/** Headers that come with an error status, whatever the endpoint. */
const ERROR_HEADERS: Partial<Record<number, Json>> = {
  429: {
    "Retry-After": { $ref: "#/components/headers/Retry-After-Limit" },
    ...Object.fromEntries(RATE_LIMIT_HEADERS.map((h) => [h, { $ref: `#/components/headers/${h}` }])),
  },
  503: { "Retry-After": { $ref: "#/components/headers/Retry-After" } },
};

const SAMPLE_FIELD_ERRORS = [{ field: "to", description: "is required" }];

/** One response per error status: the shape(s) and codes it can carry, an example per error. */
function errorResponses(entry: Endpoint, components: Components): Record<string, Json> {
  const byStatus = new Map<number, ErrorName[]>();
  for (const name of failuresOf(entry)) {
    const status = ERRORS[name].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), name]);
  }
  const out: Record<string, Json> = {};
  for (const [status, names] of [...byStatus].sort(([a], [b]) => a - b)) {
    const bodies = names.map((name) => ({
      name,
      body: errorBody(name, entry.errors, name === "validation" ? SAMPLE_FIELD_ERRORS : undefined),
    }));
    const codes = (shape: ErrorShape) => [
      ...new Set(
        bodies.flatMap(({ body }) =>
          "type" in body.error && shape === "legacy"
            ? [body.error.type]
            : "code" in body.error && shape === "kit"
              ? [body.error.code]
              : [],
        ),
      ),
    ];
    // One whole schema per convention the status is answered in (see conventions.ts for why).
    const variants = [
      ...(codes("legacy").length > 0 ? [components.convert(legacyErrorSchema(codes("legacy")))] : []),
      ...(codes("kit").length > 0 ? [components.convert(kitErrorSchema(codes("kit")))] : []),
    ];
    out[String(status)] = {
      description: [...new Set(bodies.map(({ body }) => body.message))].join("; "),
      ...(ERROR_HEADERS[status] ? { headers: ERROR_HEADERS[status] } : {}),
      content: {
        "application/json": {
          schema: variants.length === 1 ? variants[0] : { oneOf: variants },
          examples: Object.fromEntries(
            bodies.map(({ name, body }) => [
              name,
              components.example(`${body.status === "" ? "legacy" : "kit"}.${name}`, {
                summary: body.error.description,
                value: body,
              }),
            ]),
          ),
        },
      },
    };
  }
  return out;
}

function operation(entry: Endpoint, config: Config, components: Components): Json {
  const body = entry.request?.body;
  const bodySchema = typeof body === "function" ? body(config) : body;
  const responses: Record<string, Json> = {};
  for (const [status, response] of Object.entries(entry.responses)) {
    const headers = parameters(components, "header", response.headers).map(
      ({ name, in: _in, required, ...header }) => [name, { required, ...header }],
    );
    if (entry.authenticated !== false && status.startsWith("2"))
      headers.push(...RATE_LIMIT_HEADERS.map((h) => [h, { $ref: `#/components/headers/${h}` }]));
    responses[status] = {
      description: response.description,
      ...(headers.length > 0 ? { headers: Object.fromEntries(headers) } : {}),
      ...(response.body
        ? {
            content: {
              [response.contentType ?? "application/json"]: { schema: components.convert(response.body) },
            },
          }
        : {}),
    };
  }
  return {
    operationId: entry.operationId,
    summary: entry.summary,
    ...(entry.description ? { description: entry.description } : {}),
    tags: [entry.tag],
    ...(entry.authenticated === false ? { security: [] } : {}),
    parameters: [
      ...parameters(components, "path", entry.request?.path),
      ...parameters(components, "query", entry.request?.query),
      ...parameters(components, "header", entry.request?.headers),
    ],
    ...(bodySchema
      ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: components.convert(bodySchema) } },
          },
        }
      : {}),
    // An answer the entry describes itself (e.g. /readyz's 503) wins over the catalogue's.
    responses: { ...errorResponses(entry, components), ...responses },
    "x-shiri-origin": entry.origin,
    "x-shiri-error-convention": entry.errors,
  };
}

/** The whole document. Throws on two entries for one operation or one operationId. */
export function openApiDocument(endpoints: readonly Endpoint[], config: Config): Json {
  const components = new Components();
  const paths: Record<string, Record<string, Json>> = {};
  const operationIds = new Set<string>();
  for (const entry of endpoints) {
    const item = paths[entry.path] ?? {};
    paths[entry.path] = item;
    if (item[entry.method]) throw new Error(`two entries for ${entry.method.toUpperCase()} ${entry.path}`);
    if (operationIds.has(entry.operationId)) throw new Error(`operationId ${entry.operationId} used twice`);
    operationIds.add(entry.operationId);
    item[entry.method] = operation(entry, config, components);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Shiri SMS API",
      version: "1.0.0",
      description:
        "SMS for high-volume senders reaching Zimbabwe's operators. The reference in words, with the " +
        "conventions, every error and examples, is docs/api.md in the repository.",
    },
    // Relative: the address this document was fetched from (each deployment has its own; the
    // development one is http://localhost:3000). Every path below starts with /api/v1.
    servers: [{ url: "/", description: "The Shiri service that serves this document." }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    security: [{ apiKey: [] }],
    paths,
    webhooks: {
      messageEvent: {
        post: {
          operationId: "messageEvent",
          summary: "A callback: one event (or a batch of them), signed",
          description:
            "A message event is posted to its send's webhook_url, else to the account webhook; " +
            "message.received and the contact events go to the account webhook. Verify Shiri-Signature " +
            "against the raw body (docs/api.md, Verifying a callback); deduplicate on the event id. " +
            "An account webhook with a batch_size above 1 gets a JSON array of events instead, " +
            "answered for all of them at once (docs/api.md, Callbacks in batches).",
          parameters: parameters(components, "header", callbackHeaders),
          requestBody: {
            required: true,
            content: { "application/json": { schema: components.convert(callbackBodySchema) } },
          },
          responses: {
            "2XX": { description: "Received: the event is delivered." },
            "410": { description: "Gone: the event is failed for good, never retried." },
            default: { description: "Anything else (or no answer within 5 s): retried with back-off." },
          },
        },
      },
    },
    components: {
      schemas: components.schemas,
      examples: components.examples,
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer <API key>`; a missing or revoked key is a 401 (Kit shape).",
        },
      },
      headers: {
        // Every 503 and every 429 carries it (src/intake/errors.ts, rate-limit.ts).
        "Retry-After": {
          description: `Seconds to wait before retrying (${RETRY_AFTER_SECONDS}).`,
          required: true,
          schema: { type: "integer" },
        },
        "Retry-After-Limit": {
          description: "Seconds until the limit that refused the request lets it through (at least 1).",
          required: true,
          schema: { type: "integer", minimum: 1 },
        },
        "RateLimit-Limit": {
          description: "The quota of the limit nearest its end (on a 429, the one that refused).",
          schema: { type: "integer" },
        },
        "RateLimit-Remaining": { description: "What is left of that quota.", schema: { type: "integer" } },
        "RateLimit-Reset": {
          description: "Seconds until that limit is whole again.",
          schema: { type: "integer" },
        },
        "RateLimit-Policy": {
          description: "Every limit that applied, as `<quota>;w=<window seconds>`, comma-separated.",
          schema: { type: "string", examples: ["500;w=1, 1000;w=1"] },
        },
      },
    },
  };
}
