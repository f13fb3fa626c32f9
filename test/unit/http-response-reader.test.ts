import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_HEAD_BYTES, type Progress, ResponseReader } from "../../src/webhooks/http-response-reader.ts";

/** Feeds `parts` one after another; the reader and its last progress. */
function read(...parts: string[]): { reader: ResponseReader; progress: Progress } {
  const reader = new ResponseReader();
  let progress: Progress = "more";
  for (const part of parts) {
    progress = reader.push(Buffer.from(part, "latin1"));
    if (progress !== "more") break;
  }
  return { reader, progress };
}

const CHUNKED =
  "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/plain\r\n\r\n" +
  "5\r\nhello\r\n1;ext=1\r\n \r\n10\r\n0123456789abcdef\r\n0\r\nx-checksum: abc\r\nx-more: 1\r\n\r\n";

describe("reading a callback's response", () => {
  it("reads a Content-Length body to its end and keeps the connection", () => {
    const { reader, progress } = read("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
    expect(progress).toBe("done");
    expect(reader).toMatchObject({ status: 200, reusable: true, leftover: 0 });
  });

  it("gives the status once the status line is in, before the rest of the head and the body", () => {
    const reader = new ResponseReader();
    expect(reader.push(Buffer.from("HTTP/1.1 503 Service Unavailable\r\nconte"))).toBe("more");
    expect(reader.status).toBe(503);
    expect(reader.push(Buffer.from("nt-length: 4\r\n\r\nbu"))).toBe("more");
    expect(reader.push(Buffer.from("sy"))).toBe("done");
    expect(reader.reusable).toBe(true);
  });

  it("reads a chunked body with extensions and trailers", () => {
    const { reader, progress } = read(CHUNKED);
    expect(progress).toBe("done");
    expect(reader).toMatchObject({ status: 200, reusable: true, leftover: 0 });
  });

  it("reads the same chunked response split at every byte boundary, and in every three parts", () => {
    for (let cut = 0; cut <= CHUNKED.length; cut++) {
      const { reader, progress } = read(CHUNKED.slice(0, cut), CHUNKED.slice(cut));
      expect([progress, reader.status, reader.reusable], `cut at ${cut}`).toEqual(["done", 200, true]);
    }
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: CHUNKED.length }),
        fc.integer({ min: 0, max: CHUNKED.length }),
        (a, b) => {
          const [i, j] = a <= b ? [a, b] : [b, a];
          const { reader, progress } = read(CHUNKED.slice(0, i), CHUNKED.slice(i, j), CHUNKED.slice(j));
          return progress === "done" && reader.status === 200 && reader.reusable && reader.leftover === 0;
        },
      ),
    );
  });

  it("reads it byte by byte", () => {
    const { reader, progress } = read(...CHUNKED.split(""));
    expect([progress, reader.status, reader.reusable]).toEqual(["done", 200, true]);
  });

  it("accepts bare LF line ends", () => {
    const { reader, progress } = read("HTTP/1.1 200 OK\ntransfer-encoding: chunked\n\n2\nok\n0\n\n");
    expect([progress, reader.status, reader.reusable]).toEqual(["done", 200, true]);
  });

  it("skips informational responses and waits for the final one", () => {
    const reader = new ResponseReader();
    expect(reader.push(Buffer.from("HTTP/1.1 100 Continue\r\n\r\n"))).toBe("more");
    expect(reader.status).toBeNull();
    expect(reader.push(Buffer.from("HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201"))).toBe(
      "more",
    );
    expect(reader.status).toBeNull();
    expect(reader.push(Buffer.from(" Created\r\ncontent-length: 0\r\n\r\n"))).toBe("done");
    expect(reader).toMatchObject({ status: 201, reusable: true });
  });

  it("takes 101 as final, and the connection as lost to another protocol", () => {
    const { reader, progress } = read("HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\n");
    expect([progress, reader.status, reader.reusable]).toEqual(["done", 101, false]);
  });

  it.each([204, 304])("reads no body after %i", (status) => {
    const { reader, progress } = read(`HTTP/1.1 ${status} X\r\n\r\n`);
    expect([progress, reader.status, reader.reusable]).toEqual(["done", status, true]);
  });

  it("without framing, reads the body until the connection closes, then does not reuse it", () => {
    const reader = new ResponseReader();
    expect(reader.push(Buffer.from("HTTP/1.1 200 OK\r\n\r\nsome"))).toBe("more");
    expect(reader.status).toBe(200);
    expect(reader.push(Buffer.from(" more"))).toBe("more");
    expect(reader.end()).toBe("done");
    expect(reader.reusable).toBe(false);
  });

  it("a transfer coding other than chunked last is read until close", () => {
    const { reader, progress } = read("HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nxx");
    expect([progress, reader.status]).toEqual(["more", 200]);
    expect(reader.end()).toBe("done");
    expect(reader.reusable).toBe(false);
  });

  it("chunked beside a Content-Length is read as chunked, and the connection not reused", () => {
    const { reader, progress } = read(
      "HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
    );
    expect([progress, reader.reusable]).toEqual(["done", false]);
  });

  it.each([
    ["Connection: close", "HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 0\r\n\r\n", false],
    [
      "Connection listing close",
      "HTTP/1.1 200 OK\r\nconnection: x, Close\r\ncontent-length: 0\r\n\r\n",
      false,
    ],
    ["HTTP/1.0", "HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n", false],
    ["HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\ncontent-length: 0\r\n\r\n", true],
    ["repeated equal lengths", "HTTP/1.1 200 OK\r\ncontent-length: 0, 0\r\ncontent-length: 0\r\n\r\n", true],
  ])("%s: reusable is %s", (_name, response, reusable) => {
    const { reader, progress } = read(response);
    expect([progress, reader.status, reader.reusable]).toEqual(["done", 200, reusable]);
  });

  it("HTTP/1.0 with a transfer coding is read until close (its framing is not trusted)", () => {
    const { reader, progress } = read("HTTP/1.0 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n");
    expect(progress).toBe("more");
    expect(reader.end()).toBe("done");
    expect(reader.reusable).toBe(false);
  });

  it("counts bytes after the response's end", () => {
    const { reader, progress } = read("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1");
    expect([progress, reader.leftover]).toEqual(["done", 8]);
  });

  it("refuses a head over the bound, with the status if it was read", () => {
    const filler = `x-filler: ${"a".repeat(100)}\r\n`.repeat(Math.ceil(MAX_HEAD_BYTES / 100));
    const withStatus = read(`HTTP/1.1 200 OK\r\n${filler}`);
    expect([withStatus.progress, withStatus.reader.status]).toEqual(["malformed", 200]);
    expect(withStatus.reader.error).toMatch(/response head over 16384 bytes/);
    const noStatus = read(`HTTP/1.1 200 ${"a".repeat(MAX_HEAD_BYTES)}`);
    expect([noStatus.progress, noStatus.reader.status]).toEqual(["malformed", null]);
    expect(noStatus.reader.error).toMatch(/response head over/);
    const split = read(`HTTP/1.1 200 OK\r\n${filler.slice(0, 9000)}`, `${filler.slice(9000)}\r\n`);
    expect(split.progress).toBe("malformed");
  });

  it("a cut-off response is malformed when the connection closes", () => {
    const reader = new ResponseReader();
    reader.push(Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc"));
    expect(reader.end()).toBe("malformed");
    expect(reader.error).toMatch(/closed before the response ended/);
  });

  it.each([
    ["not HTTP", "SSH-2.0-OpenSSH_9.6\r\n"],
    ["HTTP/2 preface answer", "HTTP/2 200\r\n\r\n"],
    ["no status code", "HTTP/1.1 OK\r\n\r\n"],
    ["four-digit status", "HTTP/1.1 2000 OK\r\n\r\n"],
    ["status 099", "HTTP/1.1 099 X\r\n\r\n"],
    ["header without a colon", "HTTP/1.1 200 OK\r\nbroken header\r\n\r\n"],
    ["space before the colon", "HTTP/1.1 200 OK\r\ncontent-length : 0\r\n\r\n"],
    ["folded header", "HTTP/1.1 200 OK\r\nx-a: 1\r\n  folded\r\n\r\n"],
    ["bad content-length", "HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n"],
    ["conflicting content-lengths", "HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n"],
    ["bad chunk size", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"],
    ["chunk without CRLF", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokX"],
    ["bad trailer", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n"],
    ["endless chunk size", `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${"0".repeat(2000)}`],
  ])("refuses garbage: %s", (_name, response) => {
    const { reader, progress } = read(response);
    expect(progress).toBe("malformed");
    expect(reader.error).not.toBe("");
    expect(reader.reusable).toBe(false);
  });

  it("garbage at any split point is malformed, never done", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (bytes) => {
        const text = Buffer.from(bytes).toString("latin1");
        const { progress } = read(text);
        // Random bytes cannot start with "HTTP/1." in practice; if they could, "more" is fine too.
        return progress !== "done";
      }),
    );
  });
});
