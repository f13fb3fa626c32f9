import { isUtf8 } from "node:buffer";
import express, { type Request, type RequestHandler } from "express";
import { ApiError } from "./errors.ts";

/**
 * The JSON body of a request, as one Express middleware per route. A body whose Content-Length
 * is over the route's limit is answered 413 at once. The body nearly every client sends (JSON in
 * UTF-8, not compressed) is read here, in a few lines; any other (compressed, another charset,
 * another JSON media type, no body at all) is left to Express's own parser, express.json, which
 * reads it as it always did. Both read the same way (docs/decisions/0007-one-http-stack.md):
 *
 * - over the limit: 413; bytes that are not UTF-8: 400 "unreadable request body" (the parser
 *   would decode them into U+FFFD and send that to a handset);
 * - a leading byte order mark is dropped, an empty body is {}, and anything but an object or an
 *   array (after JSON whitespace) is malformed, as in express.json's strict mode;
 * - a body that is not labelled JSON: 400 "body is not JSON".
 */
export function jsonBody(limit: number): RequestHandler {
  const libraryParser = express.json({
    limit,
    type: ["application/json", "application/*+json"],
    verify: refuseInvalidUtf8,
  });
  return (req, res, next) => {
    const declared = Number(req.headers["content-length"]);
    if (declared > limit) {
      // Answered without reading it: draining megabytes of refused bodies in 64 KiB reads left
      // the process's heap that much bigger for good.
      res.setHeader("Connection", "close");
      return next(new ApiError("payloadTooLarge"));
    }
    // A body labelled anything but JSON (or not at all: curl -d says form data) would be read as
    // no body, and the client told that every field is missing.
    if (hasBody(req) && !JSON_TYPE.test(req.headers["content-type"] ?? ""))
      return next(new ApiError("notJson"));
    if (!isPlainJson(req)) return libraryParser(req, res, next);
    readPlainJson(req, limit, next);
  };
}

/** The media types express.json reads: application/json and application/*+json, any parameters. */
const JSON_TYPE = /^\s*application\/(?:[!#$&^\w.-]+\+)?json\s*(?:;|$)/i;

/** A request with a body, as express.json judges it: chunked, or a length that is not 0. */
function hasBody(req: Request): boolean {
  const { headers } = req;
  return headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? 0) > 0;
}

/** application/json with no parameter but a UTF-8 charset. */
const JSON_UTF8 = /^application\/json\s*(?:;\s*charset\s*=\s*(?:utf-8|"utf-8")\s*)?$/i;

/** A body in JSON and UTF-8 as it comes off the wire: with a length or chunked, not compressed. */
function isPlainJson(req: Request): boolean {
  const { headers } = req;
  if (headers["content-length"] === undefined && headers["transfer-encoding"] === undefined) return false;
  const encoding = headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return false;
  const type = headers["content-type"];
  return type !== undefined && JSON_UTF8.test(type);
}

function readPlainJson(req: Request, limit: number, next: (err?: unknown) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let ended = false;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received <= limit) chunks.push(chunk);
    else chunks.length = 0;
  };
  req.on("data", onData);
  req.once("end", () => {
    ended = true;
    req.off("data", onData);
    // A chunked body over the limit is read to its end, as express.json reads it, and refused.
    if (received > limit) return next(new ApiError("payloadTooLarge"));
    const parsed = parseJsonBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    if ("error" in parsed) return next(new ApiError(parsed.error));
    req.body = parsed.value;
    next();
  });
  // The client went away mid-body: answered as Express's parser answers it, to nobody.
  req.once("close", () => {
    if (!ended) next(new ApiError("unreadableBody"));
  });
  req.once("error", () => {});
}

const FIRST_NON_WHITESPACE = /^[ \t\n\r]*(.?)/s;

/** A body's bytes read as express.json reads UTF-8 in strict mode, with the service's UTF-8 check. */
export function parseJsonBody(
  bytes: Buffer,
): { value: unknown } | { error: "unreadableBody" | "malformedJson" } {
  if (!isUtf8(bytes)) return { error: "unreadableBody" };
  let text = bytes.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return { value: {} };
  const first = FIRST_NON_WHITESPACE.exec(text)?.[1];
  if (first !== "{" && first !== "[") return { error: "malformedJson" };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: "malformedJson" };
  }
}

/**
 * express.json would decode bytes that are not UTF-8 into U+FFFD; such a body is refused instead.
 * Other charsets (UTF-16, UTF-32) are decoded by the parser.
 */
function refuseInvalidUtf8(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if ((encoding === "utf-8" || encoding === "utf8") && !isUtf8(body))
    throw Object.assign(new Error("request body is not valid UTF-8"), { type: "charset.invalid" });
}

/**
 * What express.json's error means for the client: its errors carry a `type`; zlib's (a
 * Content-Encoding the bytes do not match) only a 4xx status.
 */
export function bodyError(err: unknown): "payloadTooLarge" | "unreadableBody" | "malformedJson" | null {
  if (typeof err !== "object" || err === null) return null;
  const type = "type" in err && typeof err.type === "string" ? err.type : undefined;
  const status = "status" in err && typeof err.status === "number" ? err.status : undefined;
  if (type === "entity.too.large" || status === 413) return "payloadTooLarge";
  if (type === "entity.parse.failed") return "malformedJson";
  if (type !== undefined || (status !== undefined && status >= 400 && status < 500)) return "unreadableBody";
  return null;
}
