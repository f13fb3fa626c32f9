/**
 * What Node's HTTP parser refuses before any route sees it is answered in the Kit error shape,
 * JSON like every other answer, and the connection is closed: a header block over 16 KiB (431), a
 * header value with a control character (400), a request line that is not HTTP (400).
 */
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/service.ts";

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

/** Writes raw bytes to the API and reads everything it answers until it closes the connection. */
function exchange(raw: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(t.base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.write(raw);
  });
}

function parse(answer: string): { status: number; headers: string; body: unknown } {
  const [head = "", body = ""] = answer.split("\r\n\r\n", 2);
  return { status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body: JSON.parse(body) };
}

describe("requests Node's HTTP parser refuses", () => {
  it("headers over 16 KiB: 431 in the Kit shape, connection closed", async () => {
    const answer = parse(
      await exchange(`GET /api/v1/sms/${"a".repeat(20_000)} HTTP/1.1\r\nHost: shiri\r\n\r\n`),
    );
    expect(answer.status).toBe(431);
    expect(answer.headers).toContain("content-type: application/json");
    expect(answer.headers).toContain("connection: close");
    expect(answer.body).toEqual({
      status: "error",
      message: "request headers too large",
      error: {
        code: "REQUEST_HEADER_FIELDS_TOO_LARGE",
        description: "the request line and headers are over 16 KiB",
      },
    });
  });

  it.each([
    [
      "a header value with a control character",
      "POST /api/v1/sms HTTP/1.1\r\nHost: shiri\r\nIdempotency-Key: a\u007fb\r\n\r\n",
    ],
    ["a request line that is not HTTP", "HELLO\r\n\r\n"],
  ])("%s: 400 in the Kit shape", async (_what, raw) => {
    const answer = parse(await exchange(Buffer.from(raw, "latin1")));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      status: "error",
      message: "malformed HTTP request",
      error: { code: "BAD_REQUEST", description: "the request line or a header could not be read" },
    });
  });

  it("on a keep-alive connection, the request before an unreadable one is answered first", async () => {
    const a = await t.account();
    const bad = "GET /healthz HTTP/1.1\r\nHost: shiri\r\nX: a\u0000b\r\n\r\n";
    // One answered at once, one after a database round trip: the refusal waits for either.
    for (const [first, status] of [
      ["GET /healthz HTTP/1.1\r\nHost: shiri\r\n\r\n", "200"],
      [
        `GET /api/v1/sms/${randomUUID()} HTTP/1.1\r\nHost: shiri\r\nAuthorization: Bearer ${a.key}\r\n\r\n`,
        "404",
      ],
    ]) {
      const answers = (await exchange(`${first}${bad}`)).split(/(?=HTTP\/1\.1 )/);
      expect(answers.map((answer) => answer.split(" ")[1])).toEqual([status, "400"]);
      expect(parse(answers[1] ?? "").body).toMatchObject({ error: { code: "BAD_REQUEST" } });
    }
  });
});
