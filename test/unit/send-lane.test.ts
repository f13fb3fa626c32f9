import { describe, expect, it } from "vitest";
import { type LaneRoute, laneRouteOf, parseJsonBody } from "../../src/intake/send-lane.ts";

const SINGLE: LaneRoute = { path: "/api/v1/sms", bodyLimit: 100, beforeBody: [], afterBody: [] };
const BULK: LaneRoute = { path: "/api/v1/sms/bulk", bodyLimit: 1_000, beforeBody: [], afterBody: [] };
const ROUTES = [SINGLE, BULK];

const plain = { "content-type": "application/json", "content-length": "50" };
const take = (over: { method?: string; url?: string; headers?: Record<string, string | undefined> }) =>
  laneRouteOf(
    { method: over.method ?? "POST", url: over.url ?? "/api/v1/sms", headers: over.headers ?? plain },
    ROUTES,
  );

describe("laneRouteOf: the sends the lane takes", () => {
  it("takes a JSON POST with a Content-Length within its route's limit, on the exact path", () => {
    expect(take({})).toBe(SINGLE);
    expect(take({ url: "/api/v1/sms/bulk" })).toBe(BULK);
    expect(take({ headers: { ...plain, "content-length": "100" } })).toBe(SINGLE);
    expect(take({ url: "/api/v1/sms/bulk", headers: { ...plain, "content-length": "1000" } })).toBe(BULK);
    for (const type of [
      "application/json; charset=utf-8",
      "Application/JSON;charset=UTF-8",
      'application/json; charset="utf-8"',
    ])
      expect(take({ headers: { ...plain, "content-type": type } }), type).toBe(SINGLE);
    expect(take({ headers: { ...plain, "content-encoding": "identity" } })).toBe(SINGLE);
    expect(take({ headers: { ...plain, "content-length": "0" } })).toBe(SINGLE);
  });

  it("leaves every other request to Express", () => {
    expect(take({ method: "GET" })).toBeNull();
    expect(take({ method: "PUT" })).toBeNull();
    for (const url of [
      "/api/v1/sms?x=1",
      "/api/v1/sms/",
      "/API/v1/sms",
      "/api/v1/sms/preview",
      "/api/v1/smsx",
    ])
      expect(take({ url }), url).toBeNull();
    // Over the route's limit: Express answers 413 and closes the connection.
    expect(take({ headers: { ...plain, "content-length": "101" } })).toBeNull();
    expect(take({ headers: { ...plain, "content-length": "1e2" } })).toBeNull();
    expect(take({ headers: { "content-type": "application/json" } })).toBeNull();
    expect(take({ headers: { ...plain, "transfer-encoding": "chunked" } })).toBeNull();
    for (const encoding of ["gzip", "deflate", "br"])
      expect(take({ headers: { ...plain, "content-encoding": encoding } }), encoding).toBeNull();
    for (const type of [
      "application/json; charset=utf-16",
      "application/json; charset=latin1",
      "application/vnd.api+json",
      "application/json; foo=bar",
      "text/plain",
      "application/jsonx",
    ])
      expect(take({ headers: { ...plain, "content-type": type } }), type).toBeNull();
    expect(take({ headers: { "content-length": "50" } })).toBeNull();
  });
});

describe("parseJsonBody: as Express's strict JSON parser reads a UTF-8 body", () => {
  const parse = (text: string) => parseJsonBody(Buffer.from(text, "utf8"));

  it("objects and arrays, with whitespace and a byte order mark around them", () => {
    expect(parse('{"to":"+263771234567"}')).toEqual({ value: { to: "+263771234567" } });
    expect(parse(' \t\r\n{"a":[1,"ü"]} \n')).toEqual({ value: { a: [1, "ü"] } });
    expect(parse("\uFEFF[1,2]")).toEqual({ value: [1, 2] });
  });

  it("an empty body is an empty object (a byte order mark alone too)", () => {
    expect(parse("")).toEqual({ value: {} });
    expect(parse("\uFEFF")).toEqual({ value: {} });
  });

  it("anything but an object or an array, or broken JSON, is malformed", () => {
    for (const text of [" ", "42", '"text"', "null", "true", "{bad", '{"a":1,}', "{}}", "\u0000", "NaN"])
      expect(parse(text), JSON.stringify(text)).toEqual({ error: "malformedJson" });
  });

  it("bytes that are not UTF-8 are unreadable, before any JSON is looked at", () => {
    expect(parseJsonBody(Buffer.from([0x7b, 0xff, 0x7d]))).toEqual({ error: "unreadableBody" });
    expect(parseJsonBody(Buffer.from([0xc3]))).toEqual({ error: "unreadableBody" });
  });
});
