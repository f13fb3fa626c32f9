import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { openApiDocument } from "../../src/intake/openapi/document.ts";
import { ENDPOINTS } from "../../src/intake/openapi/endpoints.ts";
import { type Received, UndocumentedAnswer, undocumented } from "../support/openapi-responses.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * The check every test's answers go through (test/support/openapi-responses.ts, run by call()):
 * real answers pass it, and answers the document does not describe are caught, whether a test
 * builds them or a server that is not quite Shiri sends them over the wire.
 */
let t: TestService;
let acct: TestAccount;
let sent: Received;
let refused: Received;

const SEND = { to: "+263771234567", from: "SHIRI", message: "Mhoro" };

const received = (method: string, url: string, res: { status: number; headers: Headers; text: string }) => ({
  method,
  url,
  status: res.status,
  headers: res.headers,
  text: res.text,
});

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
  sent = received(
    "POST",
    "/api/v1/sms",
    await call(t.base, "POST", "/api/v1/sms", { headers: acct.headers, body: SEND }),
  );
  const unapproved = { headers: acct.headers, body: { ...SEND, from: "NOPE" } };
  refused = received("POST", "/api/v1/sms", await call(t.base, "POST", "/api/v1/sms", unapproved));
});
afterAll(() => t.stop());

/** The real answer, changed. */
const changed = (
  r: Received,
  change: Partial<Received> & { json?: (body: Record<string, unknown>) => void },
) => {
  const { json, ...rest } = change;
  const body = JSON.parse(r.text) as Record<string, unknown>;
  json?.(body);
  return { ...r, text: JSON.stringify(body), ...rest };
};
const jsonHeaders = (extra: Record<string, string> = {}) =>
  new Headers({ "content-type": "application/json; charset=utf-8", ...extra });

describe("answers held to the OpenAPI document", () => {
  it("real answers, a send and a refused send, are described", () => {
    expect(sent.status).toBe(202);
    expect(refused.status).toBe(400);
    expect(undocumented(sent)).toEqual([]);
    expect(undocumented(refused)).toEqual([]);
  });

  it("catches a wrong type, an undescribed field, status or media type, and the wrong error shape", () => {
    const numericCharge = changed(sent, { json: (b) => Object.assign(b, { charge: Number(b.charge) }) });
    expect(undocumented(numericCharge)).toEqual(["body/charge must be string"]);
    const extra = changed(sent, { json: (b) => Object.assign(b, { surprise: true }) });
    expect(undocumented(extra)).toEqual(["body must NOT have unevaluated properties (surprise)"]);
    expect(undocumented({ ...sent, status: 200 })).toEqual([
      "status 200 is not declared (declared: 202, 400, 401, 403, 409, 413, 422, 429, 500, 503)",
    ]);
    expect(undocumented({ ...sent, headers: new Headers({ "content-type": "text/plain" }) })).toEqual([
      'media type "text/plain" is not declared (declared: application/json)',
    ]);
    // The single send errs in the legacy shape: a Kit-shaped error is not what it answers.
    const kit = changed(refused, {
      json: (b) => Object.assign(b, { status: "error", error: { code: "BAD_REQUEST", description: "x" } }),
    });
    expect(undocumented(kit)).toEqual([
      "body/status must be equal to constant",
      "body/error must have required property 'type'",
      "body/error must NOT have unevaluated properties (code)",
    ]);
    const otherCode = changed(refused, {
      json: (b) => Object.assign(b, { error: { type: "ERR_NOPE", description: "x" } }),
    });
    expect(undocumented(otherCode)).toEqual([
      'body/error/type must be equal to one of the allowed values (["ERR_BAD_REQUEST"])',
    ]);
  });

  it("catches a declared header missing or malformed, and a path that is no operation", () => {
    const unavailable = {
      method: "POST",
      url: "/api/v1/sms",
      status: 503,
      text: JSON.stringify({
        status: "",
        message: "service unavailable, try again shortly",
        error: { type: "ERR_SERVICE_UNAVAILABLE", description: "service unavailable, try again shortly" },
      }),
    };
    expect(undocumented({ ...unavailable, headers: jsonHeaders({ "retry-after": "2" }) })).toEqual([]);
    expect(undocumented({ ...unavailable, headers: jsonHeaders() })).toEqual([
      "header Retry-After is required but absent",
    ]);
    expect(undocumented({ ...unavailable, headers: jsonHeaders({ "retry-after": "soon" }) })).toEqual([
      "header Retry-After must be integer",
    ]);
    expect(undocumented({ ...sent, method: "GET", url: "/api/v1/nowhere?x=1" })).toEqual([
      "the document has no operation GET for /api/v1/nowhere",
    ]);
  });

  it("refuses the error schemas the document once had: a base refined by allOf rejects every real error", () => {
    // Issue 31: each error response was allOf [the shape, { error: { type: { enum } } }]. A strict
    // validator (Redocly's linter, a gateway) judges each allOf branch alone, so the refinement's
    // `error` object, which declares `type` only, refused the `description` every error carries.
    const before = openApiDocument(ENDPOINTS, loadConfig({})) as {
      paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
    };
    const response = before.paths["/api/v1/sms"]?.post?.responses["400"] as Record<string, unknown>;
    response.content = {
      "application/json": {
        schema: {
          allOf: [
            { $ref: "#/components/schemas/LegacyError_ERR_BAD_REQUEST" },
            { properties: { error: { properties: { type: { enum: ["ERR_BAD_REQUEST"] } } } } },
          ],
        },
      },
    };
    expect(undocumented(refused, before)).toEqual([
      "body/error must NOT have unevaluated properties (description)",
    ]);
    expect(undocumented(refused)).toEqual([]);
  });

  it("call() fails the test that receives an undescribed answer over the wire", async () => {
    // A server that answers like Shiri, but with the bulk send's integer charge on a single send.
    const wrong = JSON.stringify({ ...(JSON.parse(sent.text) as object), charge: 450 });
    const impostor = http.createServer((_req, res) => {
      res.writeHead(202, { "content-type": "application/json" }).end(wrong);
    });
    await new Promise<void>((resolve) => impostor.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
    try {
      const answer = call(base, "POST", "/api/v1/sms", { headers: acct.headers, body: SEND });
      await expect(answer).rejects.toThrow(UndocumentedAnswer);
      await expect(call(base, "POST", "/api/v1/sms", { body: SEND })).rejects.toThrow(
        /POST \/api\/v1\/sms answered 202, which the OpenAPI document does not describe:\n {2}- body\/charge must be string/,
      );
      // Only a test that says why may look outside the document.
      const outside = await call(base, "POST", "/api/v1/sms", { body: SEND, outsideDocument: "this test" });
      expect(outside.body).toMatchObject({ charge: 450 });
    } finally {
      await new Promise((resolve) => impostor.close(resolve));
    }
  });
});
