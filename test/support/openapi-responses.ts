import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { loadConfig } from "../../src/config.ts";
import { openApiDocument } from "../../src/intake/openapi/document.ts";
import { ENDPOINTS } from "../../src/intake/openapi/endpoints.ts";

/**
 * Every answer the integration tests receive is held to the OpenAPI document (the one GET
 * /api/v1/openapi.json serves, built by the same code): its path and method name an operation, its
 * status is one the operation declares, its media type is the one declared for that status, its
 * body validates against the declared schema (ajv, JSON Schema 2020-12, OpenAPI 3.1's dialect,
 * formats checked), and its headers against the declared headers (present when required, valid
 * when present). call() (service.ts) runs this on every answer; docs/decisions/0002 says why ajv.
 *
 * The document leaves objects open, as a promise to clients that extensions may add fields. The
 * tests do not: here every object is closed (`unevaluatedProperties: false` wherever the document
 * says nothing), so a field the service sends but the document does not describe fails the test,
 * as it would fail a strict validator an integrator may run.
 */

type Json = Record<string, unknown>;

/** An answer as a test received it. */
export interface Received {
  method: string;
  /** The path as requested, with its query string if any. */
  url: string;
  status: number;
  headers: Headers;
  /** The body as text (JSON is parsed here when the media type says JSON). */
  text: string;
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Where the document's component schemas live for ajv: references are rewritten to point here. */
const COMPONENTS_ID = "https://shiri.invalid/openapi.json";

/** A copy of a schema with every object closed where the document leaves it open (see above). */
function closed(schema: unknown, inAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => closed(s, inAllOf));
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" || key === "$defs")
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, closed(v)]));
    else if (key === "items" || key === "additionalProperties" || key === "not") out[key] = closed(value);
    else if (key === "anyOf" || key === "oneOf") out[key] = (value as unknown[]).map((s) => closed(s));
    // An allOf member is judged alone: closed, it would refuse what its siblings declare, so the
    // holder is closed instead. Objects nested in a member are still closed: a member that
    // refines a nested object of another (what the document's error schemas once did) is refused,
    // as strict validators refuse it; the document describes every object whole instead.
    else if (key === "allOf") out[key] = (value as unknown[]).map((s) => closed(s, true));
    else out[key] = value;
  }
  const describesObject = out.type === "object" || "properties" in out || "allOf" in out;
  if (describesObject && !inAllOf && !("additionalProperties" in out) && !("unevaluatedProperties" in out))
    out.unevaluatedProperties = false;
  return out;
}

const relinked = (schema: unknown): Json =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`));

interface Operation {
  template: string;
  pattern: RegExp;
  literalSegments: number;
  method: string;
  responses: Json;
}

class ResponseChecker {
  readonly document: Json;
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[] = [];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(document: Json) {
    this.document = document;
    this.ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true, allowUnionTypes: true });
    addFormats.default(this.ajv);
    // OpenAPI's integer formats; an int64 amount must still be exact in a JavaScript number.
    this.ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isSafeInteger(n) });
    this.ajv.addFormat("int32", { type: "number", validate: (n: number) => n === (n | 0) });
    const components = (this.document.components ?? {}) as Json;
    this.ajv.addSchema(relinked(closed({ $id: COMPONENTS_ID, $defs: components.schemas ?? {} })));
    for (const [template, item] of Object.entries(this.document.paths as Record<string, Json>)) {
      const segments = template.split("/");
      const pattern = new RegExp(
        `^${segments.map((s) => (/^\{\w+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))).join("/")}$`,
      );
      const literalSegments = segments.filter((s) => !s.startsWith("{")).length;
      for (const [method, op] of Object.entries(item))
        if (isObject(op) && isObject(op.responses))
          this.operations.push({ template, pattern, literalSegments, method, responses: op.responses });
    }
  }

  /** A `$ref` inside the document, followed. */
  private resolve(value: unknown): Json {
    if (!isObject(value) || typeof value.$ref !== "string") return value as Json;
    const target = value.$ref
      .slice(2)
      .split("/")
      .reduce<unknown>(
        (v, p) => (isObject(v) ? v[p.replaceAll("~1", "/").replaceAll("~0", "~")] : undefined),
        this.document,
      );
    if (!isObject(target)) throw new Error(`the document's reference ${value.$ref} does not resolve`);
    return this.resolve(target);
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(relinked(closed(schema)));
      this.validators.set(key, validate);
    }
    return validate;
  }

  private schemaProblems(key: string, schema: unknown, value: unknown, what: string): string[] {
    const validate = this.validator(key, schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => {
      const where = `${what}${e.instancePath}`;
      const extra =
        e.keyword === "unevaluatedProperties"
          ? ` (${String((e.params as { unevaluatedProperty?: string }).unevaluatedProperty)})`
          : e.keyword === "enum"
            ? ` (${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)})`
            : "";
      return `${where} ${e.message ?? e.keyword}${extra}`;
    });
  }

  /** The operation a request reached: the matching template with the most literal segments. */
  operationFor(method: string, url: string): Operation | undefined {
    const path = url.split("?")[0] ?? "";
    return this.operations
      .filter((o) => o.method === method.toLowerCase() && o.pattern.test(path))
      .sort((a, b) => b.literalSegments - a.literalSegments)[0];
  }

  /** What about the answer the document does not describe; empty when it describes it all. */
  problems(r: Received): string[] {
    const op = this.operationFor(r.method, r.url);
    if (!op) return [`the document has no operation ${r.method.toUpperCase()} for ${r.url.split("?")[0]}`];
    const statusKey = [String(r.status), `${String(r.status)[0]}XX`, "default"].find(
      (k) => k in op.responses,
    );
    if (!statusKey)
      return [`status ${r.status} is not declared (declared: ${Object.keys(op.responses).join(", ")})`];
    const response = this.resolve(op.responses[statusKey]);
    const where = `${op.method} ${op.template} ${statusKey}`;
    const problems: string[] = [];

    for (const [name, declared] of Object.entries((response.headers ?? {}) as Json)) {
      const header = this.resolve(declared);
      const value = r.headers.get(name);
      if (value === null) {
        if (header.required === true) problems.push(`header ${name} is required but absent`);
        continue;
      }
      const schema = header.schema as Json | undefined;
      if (!schema) continue;
      const numeric = schema.type === "integer" || schema.type === "number";
      const parsed = numeric && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      problems.push(...this.schemaProblems(`${where} header ${name}`, schema, parsed, `header ${name}`));
    }

    const content = response.content as Json | undefined;
    const mediaType = (r.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    if (!content) {
      if (r.text !== "") problems.push(`a body (${mediaType || "no media type"}) where none is declared`);
      return problems;
    }
    const media = content[mediaType] as Json | undefined;
    if (!media) {
      problems.push(
        `media type "${mediaType}" is not declared (declared: ${Object.keys(content).join(", ")})`,
      );
      return problems;
    }
    let body: unknown = r.text;
    if (mediaType === "application/json" || mediaType.endsWith("+json")) {
      try {
        body = JSON.parse(r.text);
      } catch {
        problems.push(`the body is not JSON: ${r.text.slice(0, 100)}`);
        return problems;
      }
    }
    if (media.schema)
      problems.push(...this.schemaProblems(`${where} ${mediaType}`, media.schema, body, "body"));
    return problems;
  }
}

let checker: ResponseChecker | undefined;

/** The document as the service serves it on its default configuration (built once per process). */
function defaultChecker(): ResponseChecker {
  checker ??= new ResponseChecker(openApiDocument(ENDPOINTS, loadConfig({})));
  return checker;
}

/** What the document does not describe about an answer (a document of its own may be given). */
export function undocumented(r: Received, document?: Json): string[] {
  return (document ? new ResponseChecker(document) : defaultChecker()).problems(r);
}

/** An answer the OpenAPI document does not describe. */
export class UndocumentedAnswer extends Error {}

/** Throws, failing the test that received it, unless the document describes the answer. */
export function expectDocumented(r: Received): void {
  const problems = undocumented(r);
  if (problems.length === 0) return;
  throw new UndocumentedAnswer(
    `${r.method.toUpperCase()} ${r.url} answered ${r.status}, which the OpenAPI document does not describe:\n` +
      problems.map((p) => `  - ${p}`).join("\n") +
      `\n  body: ${r.text.slice(0, 600)}`,
  );
}
