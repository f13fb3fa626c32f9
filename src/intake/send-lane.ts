import { isUtf8 } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, type ErrorName } from "./errors.ts";
import type { ErrorHandler, Handler, HttpRequest, HttpResponse, Locals, Next } from "./handler.ts";

/**
 * The send routes on node's own request and response, without Express. They are where the
 * API's time goes, and Express's router, body parser and response methods cost more CPU a request
 * than the rest of the API's work on it (bench/RESULTS.md, fourth pass). The lane runs the very
 * handlers Express runs for these routes, in the same order; only the body is read by
 * `readJsonBody` here instead of Express's parser.
 *
 * It takes a send only in the form nearly every client sends: POST to the exact path, a declared
 * Content-Length within the route's limit, Content-Type application/json in UTF-8, no
 * Content-Encoding. Anything else (a query string, another charset, a compressed or chunked body,
 * a body over the limit, a path in other letter case) goes to Express, which answers it as before.
 */
export interface LaneRoute {
  path: string;
  /** The largest body the route reads, in bytes. */
  bodyLimit: number;
  /** The route's handlers before its body is read, and after. */
  beforeBody: readonly Handler[];
  afterBody: readonly Handler[];
}

/** application/json, with no parameter but a UTF-8 charset. */
const JSON_UTF8 = /^application\/json\s*(?:;\s*charset\s*=\s*(?:utf-8|"utf-8")\s*)?$/i;
const DECIMAL = /^\d+$/;

/** The route the lane serves this request on, or null to leave it to Express. */
export function laneRouteOf(
  req: Pick<IncomingMessage, "method" | "url" | "headers">,
  routes: readonly LaneRoute[],
): LaneRoute | null {
  if (req.method !== "POST") return null;
  const route = routes.find((r) => r.path === req.url);
  if (!route) return null;
  const { headers } = req;
  if (headers["transfer-encoding"] !== undefined) return null;
  const encoding = headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return null;
  const length = headers["content-length"];
  if (length === undefined || !DECIMAL.test(length) || Number(length) > route.bodyLimit) return null;
  const type = headers["content-type"];
  if (type === undefined || !JSON_UTF8.test(type)) return null;
  return route;
}

const FIRST_NON_WHITESPACE = /^[ \t\n\r]*(.?)/s;

/**
 * A body read as Express's JSON parser reads it (strict, with the service's UTF-8 check): bytes
 * that are not UTF-8 are unreadable; a leading byte order mark is dropped; an empty body is {};
 * anything but an object or an array is malformed.
 */
export function parseJsonBody(bytes: Buffer): { value: unknown } | { error: ErrorName } {
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

/** Reads the whole body (the lane took its Content-Length as within the limit) and parses it. */
const readJsonBody: Handler = (req, _res, next) => {
  const chunks: Buffer[] = [];
  let ended = false;
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.once("end", () => {
    ended = true;
    const parsed = parseJsonBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    if ("error" in parsed) return next(new ApiError(parsed.error));
    req.body = parsed.value;
    next();
  });
  // The client went away mid-body: answered as Express answers it, to nobody.
  req.once("close", () => {
    if (!ended) next(new ApiError("unreadableBody"));
  });
  req.once("error", () => {});
};

/**
 * The lane: a listener that serves the requests it takes and answers false for the others.
 * `first` runs before every route's own handlers (the request id and log line, the metrics), as
 * Express runs them for every request; `onError` is Express's error handler.
 */
export function sendLane(options: {
  routes: readonly LaneRoute[];
  first: readonly Handler[];
  onError: ErrorHandler;
  /** Answers a request no handler answered (Express's last handler). */
  notFound: Handler;
}): (req: IncomingMessage, res: ServerResponse) => boolean {
  const chains = new Map(
    options.routes.map((route) => [
      route,
      [...options.first, ...route.beforeBody, readJsonBody, ...route.afterBody, options.notFound],
    ]),
  );
  return (req, res) => {
    const route = laneRouteOf(req, options.routes);
    const chain = route && chains.get(route);
    if (!route || !chain) return false;
    const request: HttpRequest = Object.assign(req, { route: { path: route.path } });
    // Filled in by the handlers, as under Express.
    const response: HttpResponse = Object.assign(res, { locals: {} as Locals });
    run(chain, request, response, options.onError);
    return true;
  };
}

/** Runs handlers in order, as Express's router does: next() goes on, next(err) or a throw or a rejection goes to onError. */
function run(chain: readonly Handler[], req: HttpRequest, res: HttpResponse, onError: ErrorHandler): void {
  let position = 0;
  const ignore: Next = () => {};
  const next: Next = (err) => {
    if (err) return onError(err, req, res, ignore);
    const handler = chain[position++];
    if (!handler) return;
    try {
      const result = handler(req, res, next);
      if (result instanceof Promise)
        result.catch((rejection: unknown) => next(rejection ?? new Error("rejected")));
    } catch (thrown) {
      next(thrown);
    }
  };
  next();
}
