import http from "node:http";
import https from "node:https";
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

/**
 * POSTs one signed request, bounded by the timeout from the first byte to the status line. The
 * status is the answer: the response body is drained but never waited for. Never throws.
 */
export function postCallback(cb: Callback, opts: PostOptions): Promise<AttemptOutcome> {
  let url: URL;
  try {
    url = new URL(cb.url);
  } catch {
    return Promise.resolve({ kind: "failed", status: null, error: "invalid URL" });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return Promise.resolve({ kind: "failed", status: null, error: "URL scheme must be http or https" });
  if (!opts.allowPrivate) {
    const literal = ipLiteral(url);
    if (literal && !isPublicAddress(literal))
      return Promise.resolve({
        kind: "failed",
        status: null,
        error: new RefusedAddressError(literal).message,
        refused: true,
      });
  }

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
  const secure = url.protocol === "https:";
  const signal = AbortSignal.timeout(opts.timeoutMs);

  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const request = (secure ? https : http).request(
      url,
      {
        method: "POST",
        headers,
        agent: secure ? opts.agents.https : opts.agents.http,
        signal,
        // The guard runs on the addresses this very connection uses (no resolve-then-connect gap).
        ...lookupOption(opts),
      },
      (res) => {
        settle(outcomeOfStatus(res.statusCode ?? 0));
        res.on("error", () => {});
        res.resume();
      },
    );
    request.on("error", (err) => {
      if (err instanceof RefusedAddressError)
        return settle({ kind: "failed", status: null, error: err.message, refused: true });
      const error = signal.aborted ? `no answer within ${opts.timeoutMs} ms` : describe(err);
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
