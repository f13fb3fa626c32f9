import http from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * How the send routes (single, bulk, batch) read their bodies (src/intake/json-body.ts): a body in
 * plain JSON and UTF-8, with a Content-Length or chunked, is read by the project's own reader;
 * the same bytes compressed go to express.json. Each case is sent all three ways: each answers
 * what the case expects, and the three answers are the same but for the ids and times each send
 * is given.
 */
let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account({ balance: 100_000_000 });
});
afterAll(() => t?.stop());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

type Form = "length" | "chunked" | "gzip";

/** A POST as node sends it: with its Content-Length, chunked in two parts, or gzipped. */
function post(path: string, headers: Record<string, string>, raw: Buffer, form: Form): Promise<Answer> {
  const chunked = form === "chunked";
  const body = form === "gzip" ? gzipSync(raw) : raw;
  const encoding = form === "gzip" ? { "content-encoding": "gzip" } : {};
  const url = new URL(t.base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path,
        headers: chunked
          ? { ...headers, "transfer-encoding": "chunked" }
          : { ...headers, ...encoding, "content-length": String(body.length) },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`POST ${path} timed out`)));
    req.on("error", reject);
    if (chunked && body.length > 0) {
      // Two chunks, so the body really arrives in parts.
      const half = Math.floor(body.length / 2);
      req.write(body.subarray(0, half));
      req.write(body.subarray(half));
    } else if (body.length > 0) req.write(body);
    req.end();
  });
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;
/** Headers whose values differ between any two answers (or between the two ways of sending). */
const VARYING = new Set([
  "date",
  "x-request-id",
  "ratelimit-remaining",
  "ratelimit-reset",
  "transfer-encoding",
  "content-length",
]);

/** What must be the same both ways: status, body with ids and times blanked, and every header but the varying ones. */
function comparable(answer: Answer) {
  const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !VARYING.has(name)));
  return {
    status: answer.status,
    body: answer.text.replace(UUID, "<id>").replace(TIME, "<time>"),
    headers,
    headerNames: Object.keys(answer.headers)
      .filter((name) => name !== "transfer-encoding")
      .sort(),
  };
}

const SINGLE = { path: "/api/v1/sms", valid: { to: "+263771234567", from: "SHIRI", message: "hello" } };
const BULK = {
  path: "/api/v1/sms/bulk",
  valid: { to: ["+263771234567", "+263711234567"], from: "SHIRI", message: "hello" },
};

const BATCH = {
  path: "/api/v1/sms/batch",
  valid: {
    from: "SHIRI",
    template: "Hi {{name}}\u2019s code",
    smart_encoding: true,
    validity_period: 600,
    messages: [
      { to: "+263771234567", variables: { name: "Rudo" } },
      { to: "+263711234567", variables: { name: "Tino" } },
    ],
  },
};
/** The single send with every send option (issue 30). */
const SINGLE_WITH_OPTIONS = {
  path: "/api/v1/sms",
  valid: {
    ...SINGLE.valid,
    message: "it\u2019s here",
    smart_encoding: true,
    validity_period: 300,
    // No window: one that held the send back would answer with the time it opens.
    deliver_between: null,
  },
};

const utf8 = (text: string) => Buffer.from(text, "utf8");

/** What a case is answered: its status, and the error's `message` in the endpoint's convention. */
interface Expected {
  status: number;
  message?: { legacy: string; kit: string } | string;
}
const ACCEPTED: Expected = { status: 202 };
const VALIDATION: Expected = {
  status: 400,
  message: { legacy: "invalid request", kit: "Validation failed" },
};
const MALFORMED: Expected = { status: 400, message: "malformed JSON body" };

const cases = (
  valid: object,
): Array<{ name: string; body: Buffer; headers?: Record<string, string>; expected: Expected }> => [
  { name: "a valid send", body: utf8(JSON.stringify(valid)), expected: ACCEPTED },
  {
    name: "a valid send after a byte order mark",
    body: utf8(`\uFEFF${JSON.stringify(valid)}`),
    expected: ACCEPTED,
  },
  {
    name: "a valid send labelled charset=utf-8, with the client's request id",
    body: utf8(JSON.stringify(valid)),
    headers: { "content-type": "application/json; charset=UTF-8", "x-request-id": "trace-body-1" },
    expected: ACCEPTED,
  },
  {
    name: "a valid send labelled with a quoted charset",
    body: utf8(JSON.stringify(valid)),
    headers: { "content-type": 'application/json; charset="utf-8"' },
    expected: ACCEPTED,
  },
  { name: "an empty body (read as {})", body: Buffer.alloc(0), expected: VALIDATION },
  { name: "whitespace only", body: utf8(" \n"), expected: MALFORMED },
  { name: "malformed JSON", body: utf8('{"to":'), expected: MALFORMED },
  { name: "a number", body: utf8("42"), expected: MALFORMED },
  { name: "an array", body: utf8("[]"), expected: VALIDATION },
  {
    name: "bytes that are not UTF-8",
    body: Buffer.concat([utf8('{"to":"'), Buffer.from([0xff, 0xc3]), utf8('"}')]),
    expected: { status: 400, message: "unreadable request body" },
  },
  {
    name: "a missing field and an unknown one",
    body: utf8(JSON.stringify({ ...valid, message: undefined, x: 1 })),
    expected: VALIDATION,
  },
  {
    name: "an unapproved sender",
    body: utf8(JSON.stringify({ ...valid, from: "NOBODY" })),
    expected: {
      status: 400,
      message: { legacy: "unknown or unapproved sender id", kit: "Validation failed" },
    },
  },
  {
    name: "an invalid Idempotency-Key",
    body: utf8(JSON.stringify(valid)),
    headers: { "idempotency-key": "has spaces" },
    expected: { status: 400, message: "invalid Idempotency-Key header" },
  },
  {
    name: "no Authorization",
    body: utf8(JSON.stringify(valid)),
    headers: { authorization: "" },
    expected: { status: 401, message: "missing authentication" },
  },
  {
    name: "an unknown key",
    body: utf8(JSON.stringify(valid)),
    headers: { authorization: "Bearer sk_nobody" },
    expected: { status: 401, message: "missing authentication" },
  },
];

describe("every send body is read alike: plain, chunked or compressed", () => {
  for (const endpoint of [SINGLE, BULK, BATCH, SINGLE_WITH_OPTIONS]) {
    for (const c of cases(endpoint.valid)) {
      it(`${endpoint.path}: ${c.name}`, async () => {
        const headers = Object.fromEntries(
          Object.entries({ ...acct.headers, ...c.headers }).filter(([, value]) => value !== ""),
        );
        const plain = await post(endpoint.path, headers, c.body, "length");
        const chunked = await post(endpoint.path, headers, c.body, "chunked");
        const gzipped = await post(endpoint.path, headers, c.body, "gzip");
        expect(plain.status, plain.text).toBe(c.expected.status);
        expect(plain.headers["content-type"]).toBe("application/json; charset=utf-8");
        const { message } = c.expected;
        if (message !== undefined) {
          const shape = endpoint.path === "/api/v1/sms" ? "legacy" : "kit";
          const text = typeof message === "string" ? message : message[shape];
          expect((JSON.parse(plain.text) as { message: string }).message).toBe(text);
        }
        expect(comparable(chunked)).toEqual(comparable(plain));
        expect(comparable(gzipped)).toEqual(comparable(plain));
        if (c.headers?.["x-request-id"]) {
          for (const answer of [plain, chunked, gzipped])
            expect(answer.headers["x-request-id"]).toBe(c.headers["x-request-id"]);
        }
      });
    }
  }

  it("a declared Content-Length over the limit: 413 at once, and the connection closed", async () => {
    const url = new URL(t.base);
    for (const [path, shape] of [
      [SINGLE.path, "legacy"],
      [BULK.path, "kit"],
    ] as const) {
      // Only the headers are sent: the answer must not wait for the body.
      const answer = await new Promise<Answer>((resolve, reject) => {
        const req = http.request(
          {
            host: url.hostname,
            port: url.port,
            method: "POST",
            path,
            headers: { ...acct.headers, "content-length": String(200_000_000) },
            timeout: 10_000,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => {
              resolve({
                status: res.statusCode ?? 0,
                headers: res.headers,
                text: Buffer.concat(chunks).toString(),
              });
              req.destroy();
            });
          },
        );
        req.on("timeout", () => req.destroy(new Error(`POST ${path} timed out`)));
        req.on("error", reject);
        req.flushHeaders();
      });
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe("close");
      const body = JSON.parse(answer.text) as { message: string; error: Record<string, string> };
      expect(body.message).toBe("request body too large");
      expect(shape === "legacy" ? body.error.type : body.error.code).toBe(
        shape === "legacy" ? "ERR_PAYLOAD_TOO_LARGE" : "PAYLOAD_TOO_LARGE",
      );
    }
  });

  it("each is counted under its route in shiri_http_requests_total", async () => {
    const count = async () => {
      const text = await (await fetch(`http://127.0.0.1:${t.service.metricsPort}/metrics`)).text();
      const line = text
        .split("\n")
        .find(
          (l) =>
            l.startsWith("shiri_http_requests_total{") &&
            l.includes('route="/api/v1/sms"') &&
            l.includes('status="202"'),
        );
      return Number(line?.split(" ").pop() ?? 0);
    };
    const before = await count();
    const body = utf8(JSON.stringify(SINGLE.valid));
    for (const form of ["length", "chunked", "gzip"] as const)
      expect((await post(SINGLE.path, acct.headers, body, form)).status).toBe(202);
    expect(await count()).toBe(before + 3);
  });
});
