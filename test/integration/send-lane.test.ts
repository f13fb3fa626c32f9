import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * The send lane (src/intake/send-lane.ts) serves the send routes (single, bulk, batch) without Express when a
 * request comes in the usual form: a Content-Length and a JSON UTF-8 body. The same bytes sent
 * chunked (no Content-Length) go to Express. Each case here is sent both ways; the answers must
 * be the same but for the ids and times each send is given.
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

/** A POST as node sends it: with its Content-Length (the lane's form), or chunked (Express's). */
function post(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  chunked: boolean,
): Promise<Answer> {
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
          : { ...headers, "content-length": String(body.length) },
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
const cases = (valid: object): Array<{ name: string; body: Buffer; headers?: Record<string, string> }> => [
  { name: "a valid send", body: utf8(JSON.stringify(valid)) },
  { name: "a valid send after a byte order mark", body: utf8(`\uFEFF${JSON.stringify(valid)}`) },
  {
    name: "a valid send labelled charset=utf-8, with the client's request id",
    body: utf8(JSON.stringify(valid)),
    headers: { "content-type": "application/json; charset=UTF-8", "x-request-id": "trace-lane-1" },
  },
  { name: "an empty body", body: Buffer.alloc(0) },
  { name: "whitespace only", body: utf8(" \n") },
  { name: "malformed JSON", body: utf8('{"to":') },
  { name: "a number", body: utf8("42") },
  { name: "an array", body: utf8("[]") },
  {
    name: "bytes that are not UTF-8",
    body: Buffer.concat([utf8('{"to":"'), Buffer.from([0xff, 0xc3]), utf8('"}')]),
  },
  {
    name: "a missing field and an unknown one",
    body: utf8(JSON.stringify({ ...valid, message: undefined, x: 1 })),
  },
  { name: "an unapproved sender", body: utf8(JSON.stringify({ ...valid, from: "NOBODY" })) },
  {
    name: "an invalid Idempotency-Key",
    body: utf8(JSON.stringify(valid)),
    headers: { "idempotency-key": "has spaces" },
  },
  { name: "no Authorization", body: utf8(JSON.stringify(valid)), headers: { authorization: "" } },
  {
    name: "an unknown key",
    body: utf8(JSON.stringify(valid)),
    headers: { authorization: "Bearer sk_nobody" },
  },
];

describe("the send lane and Express answer alike", () => {
  for (const endpoint of [SINGLE, BULK, BATCH, SINGLE_WITH_OPTIONS]) {
    for (const c of cases(endpoint.valid)) {
      it(`${endpoint.path}: ${c.name}`, async () => {
        const headers = Object.fromEntries(
          Object.entries({ ...acct.headers, ...c.headers }).filter(([, value]) => value !== ""),
        );
        const lane = await post(endpoint.path, headers, c.body, false);
        const express = await post(endpoint.path, headers, c.body, true);
        expect(lane.status).toBeLessThan(500);
        expect(comparable(lane)).toEqual(comparable(express));
        if (c.headers?.["x-request-id"]) {
          expect(lane.headers["x-request-id"]).toBe(c.headers["x-request-id"]);
          expect(express.headers["x-request-id"]).toBe(c.headers["x-request-id"]);
        }
      });
    }
  }

  it("both are counted under their route in shiri_http_requests_total", async () => {
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
    expect((await post(SINGLE.path, acct.headers, body, false)).status).toBe(202);
    expect((await post(SINGLE.path, acct.headers, body, true)).status).toBe(202);
    expect(await count()).toBe(before + 2);
  });
});
