import type { LookupFunction } from "node:net";
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
import type { Exchanger, Origin } from "./callback-connections.ts";
import {
  EVENT_COUNT_HEADER,
  EVENT_ID_HEADER,
  EVENT_TYPE_HEADER,
  SIGNATURE_HEADER,
  signatureHeader,
} from "./signing.ts";

/**
 * What one attempt came to: delivered, worth another attempt, or failed for good; or no attempt
 * at all (`unsent`): the request was never written, as one ahead of it on its connection got no
 * answer in time.
 */
export type AttemptOutcome =
  | { kind: "delivered"; status: number }
  | { kind: "retry"; status: number | null; error: string; timedOut?: true }
  | { kind: "failed"; status: number | null; error: string; refused?: true }
  | { kind: "unsent"; status: null };

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
  /** The worker's kept-alive connections (callbackConnections()), or a job's own (forJob). */
  connections: Exchanger;
  /** How names are resolved (WEBHOOK_DNS_SERVERS); the system's resolver by default. */
  resolve?: Resolve | undefined;
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
  origin: Origin;
  /** The request line and the headers that depend on the URL alone, CRLF ended. */
  head: string;
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
        : destinationAt(url, secure);
  } catch {
    parsed = { error: "invalid URL" };
  }
  if (parsedUrls.size >= PARSED_URLS_MAX) parsedUrls.clear();
  parsedUrls.set(text, parsed);
  return parsed;
}

/** The URL as node's http client would send to it: the same Host, path and credentials. */
function destinationAt(url: URL, secure: boolean): Destination {
  const literal = ipLiteral(url);
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  // Credentials in the URL go as Basic authorization, percent-decoding undone, as node does.
  const credentials =
    url.username || url.password
      ? `authorization: Basic ${Buffer.from(
          `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
        ).toString("base64")}\r\n`
      : "";
  return {
    origin: {
      secure,
      host,
      port: url.port ? Number(url.port) : secure ? 443 : 80,
      servername: secure && !literal ? host : undefined,
    },
    // url.host is the hostname, bracketed if IPv6, with the port only when not the scheme's own.
    head:
      `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n${credentials}` +
      "content-type: application/json\r\nuser-agent: Shiri-Webhooks/1\r\n",
    literal,
  };
}

const ID_HEADER = EVENT_ID_HEADER.toLowerCase();
const TYPE_HEADER = EVENT_TYPE_HEADER.toLowerCase();
const COUNT_HEADER = EVENT_COUNT_HEADER.toLowerCase();
const SIGNED_HEADER = SIGNATURE_HEADER.toLowerCase();

/**
 * POSTs one signed request, bounded by the timeout from the first byte to the end of the
 * response. The status is the answer: the response body is drained but never waited for. Never
 * throws.
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
  const events =
    cb.batched || !first
      ? `${COUNT_HEADER}: ${cb.events.length}\r\n`
      : `${ID_HEADER}: ${first.id}\r\n${TYPE_HEADER}: ${first.type}\r\n`;
  const request =
    `${destination.head}content-length: ${Buffer.byteLength(cb.body)}\r\n${events}` +
    `${SIGNED_HEADER}: ${signatureHeader(cb.secrets, cb.body, timestamp)}\r\n\r\n${cb.body}`;

  return opts.connections
    .exchange(destination.origin, lookupOption(opts), request, opts.timeoutMs)
    .then((answer) => {
      if (answer.status !== null) return outcomeOfStatus(answer.status);
      if ("unsent" in answer) return { kind: "unsent", status: null };
      const { error } = answer;
      if (error instanceof RefusedAddressError)
        return { kind: "failed", status: null, error: error.message, refused: true };
      if (answer.timedOut) return { kind: "retry", status: null, error: error.message, timedOut: true };
      return { kind: "retry", status: null, error: describe(error) };
    });
}

/**
 * Lookups by resolver, one each: a connection is reused only under the lookup it was made with, so
 * a new function a request would never reuse one.
 */
const guardedLookups = new WeakMap<Resolve, LookupFunction>();
const plainLookups = new WeakMap<Resolve, LookupFunction>();

/**
 * The connection's `lookup`: the guard over the resolver unless private addresses are allowed.
 * The guard runs on the addresses this very connection uses (no resolve-then-connect gap).
 */
function lookupOption(opts: PostOptions): LookupFunction | undefined {
  const resolve = opts.resolve;
  if (opts.allowPrivate)
    return resolve && resolve !== systemResolve ? lookupOnce(plainLookups, resolve, lookupVia) : undefined;
  if (!resolve || resolve === systemResolve) return publicOnlyLookup;
  return lookupOnce(guardedLookups, resolve, publicOnlyLookupVia);
}

function lookupOnce(
  made: WeakMap<Resolve, LookupFunction>,
  resolve: Resolve,
  make: (resolve: Resolve) => LookupFunction,
): LookupFunction {
  let lookup = made.get(resolve);
  if (!lookup) {
    lookup = make(resolve);
    made.set(resolve, lookup);
  }
  return lookup;
}

function describe(err: Error): string {
  const code = "code" in err && typeof err.code === "string" ? err.code : "";
  return code ? `${code}: ${err.message}` : err.message;
}
