import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { urlToHttpOptions } from "node:url";
import {
  ipLiteral,
  isPublicAddress,
  lookupVia,
  publicOnlyLookup,
  publicOnlyLookupVia,
  RefusedAddressError,
  type Resolve,
  systemResolve,
} from "./address-guard.ts";
import {
  EVENT_COUNT_HEADER,
  EVENT_ID_HEADER,
  EVENT_TYPE_HEADER,
  SIGNATURE_HEADER,
  signatureHeader,
} from "./signing.ts";

/** What one attempt came to: delivered, worth another attempt, or failed for good. */
export type AttemptOutcome =
  | { kind: "delivered"; status: number }
  | { kind: "retry"; status: number | null; error: string }
  | { kind: "failed"; status: number | null; error: string; refused?: true };

export interface Callback {
  url: string;
  /**
   * The events the request carries. One alone is sent as itself, with its id and type in
   * headers; a batch (`batched`) as a JSON array, with their count in a header.
   */
  events: readonly { id: string; type: string }[];
  batched: boolean;
  /** The exact bytes to send and sign. */
  body: string;
  /** The account's signing secrets: the current one, then the previous one during its grace period. */
  secrets: readonly string[];
}

export interface PostOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  agents: { http: http.Agent; https: https.Agent };
  /** How names are resolved (WEBHOOK_DNS_SERVERS); the system's resolver by default. */
  resolve?: Resolve | undefined;
}

/** Keep-alive agents, one pair per worker: a burst to one receiver reuses its connections. */
export function callbackAgents(): PostOptions["agents"] {
  return {
    http: new http.Agent({ keepAlive: true, scheduling: "lifo" }),
    https: new https.Agent({ keepAlive: true, scheduling: "lifo" }),
  };
}

/**
 * 2xx delivers; 410 Gone is the receiver saying "never again" and fails the event; every other
 * answer is retried: a 404 or 401 usually means a receiver mid-deploy or still on an old secret,
 * and a 3xx (never followed) a receiver being moved, none of which should lose the event.
 */
export function outcomeOfStatus(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: "delivered", status };
  const error = `receiver answered ${status}`;
  return status === 410 ? { kind: "failed", status, error } : { kind: "retry", status, error };
}

/** Where a callback URL sends to, parsed once per URL (see parsedUrls). */
interface Destination {
  secure: boolean;
  /** The URL as http.request options (host, port, path, credentials), as it would convert it. */
  target: http.RequestOptions;
  /** The host when it is an IP literal: checked against the guard on every request. */
  literal: string | null;
}

/**
 * Parsed callback URLs by text. A worker sends to few URLs, each thousands of times: parsing and
 * turning a URL into request options was a tenth of the sending loop's JS time
 * (docs/decisions/0027). Bounded, and emptied when full, as URLs come from clients.
 */
const parsedUrls = new Map<string, Destination | { error: string }>();
const PARSED_URLS_MAX = 1000;

function destinationOf(text: string): Destination | { error: string } {
  const known = parsedUrls.get(text);
  if (known) return known;
  let parsed: Destination | { error: string };
  try {
    const url = new URL(text);
    const secure = url.protocol === "https:";
    parsed =
      url.protocol !== "http:" && !secure
        ? { error: "URL scheme must be http or https" }
        : {
            secure,
            target: urlToHttpOptions(url),
            literal: ipLiteral(url),
          };
  } catch {
    parsed = { error: "invalid URL" };
  }
  if (parsedUrls.size >= PARSED_URLS_MAX) parsedUrls.clear();
  parsedUrls.set(text, parsed);
  return parsed;
}

/**
 * POSTs one signed request, bounded by the timeout from the first byte to the status line. The
 * status is the answer: the response body is drained but never waited for. Never throws.
 */
export function postCallback(cb: Callback, opts: PostOptions): Promise<AttemptOutcome> {
  const destination = destinationOf(cb.url);
  if ("error" in destination)
    return Promise.resolve({ kind: "failed", status: null, error: destination.error });
  if (!opts.allowPrivate && destination.literal && !isPublicAddress(destination.literal))
    return Promise.resolve({
      kind: "failed",
      status: null,
      error: new RefusedAddressError(destination.literal).message,
      refused: true,
    });

  const timestamp = Math.floor(Date.now() / 1000);
  const [first] = cb.events;
  const headers = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(cb.body)),
    "user-agent": "Shiri-Webhooks/1",
    ...(cb.batched || !first
      ? { [EVENT_COUNT_HEADER.toLowerCase()]: String(cb.events.length) }
      : { [EVENT_ID_HEADER.toLowerCase()]: first.id, [EVENT_TYPE_HEADER.toLowerCase()]: first.type }),
    [SIGNATURE_HEADER.toLowerCase()]: signatureHeader(cb.secrets, cb.body, timestamp),
  };
  const { secure } = destination;

  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const request = (secure ? https : http).request(
      {
        ...destination.target,
        method: "POST",
        headers,
        agent: secure ? opts.agents.https : opts.agents.http,
        // The guard runs on the addresses this very connection uses (no resolve-then-connect gap).
        ...lookupOption(opts),
      },
      (res) => {
        settle(outcomeOfStatus(res.statusCode ?? 0));
        res.on("error", () => {});
        res.resume();
      },
    );
    // A plain timer, not an AbortSignal: a signal per request (its timer, weak references and
    // listeners) cost more than the rest of the request's setup (docs/decisions/0027).
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error("timed out"));
    }, opts.timeoutMs);
    timer.unref();
    request.once("close", () => clearTimeout(timer));
    request.on("error", (err) => {
      if (err instanceof RefusedAddressError)
        return settle({ kind: "failed", status: null, error: err.message, refused: true });
      const error = timedOut ? `no answer within ${opts.timeoutMs} ms` : describe(err);
      settle({ kind: "retry", status: null, error });
    });
    request.end(cb.body);
  });
}

const guardedLookups = new WeakMap<Resolve, LookupFunction>();

/** The request's `lookup`: the guard over the resolver unless private addresses are allowed. */
function lookupOption(opts: PostOptions): { lookup?: LookupFunction } {
  const resolve = opts.resolve;
  if (opts.allowPrivate) return resolve && resolve !== systemResolve ? { lookup: lookupVia(resolve) } : {};
  if (!resolve || resolve === systemResolve) return { lookup: publicOnlyLookup };
  let guarded = guardedLookups.get(resolve);
  if (!guarded) {
    guarded = publicOnlyLookupVia(resolve);
    guardedLookups.set(resolve, guarded);
  }
  return { lookup: guarded };
}

function describe(err: Error): string {
  const code = "code" in err && typeof err.code === "string" ? err.code : "";
  return code ? `${code}: ${err.message}` : err.message;
}
