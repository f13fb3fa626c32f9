import type { Request, RequestHandler } from "express";
import { authenticateMany, LegacyKeys, type Principal } from "../accounts/api-keys.ts";
import { KEY_KEPT_MS, KeyCache } from "../accounts/key-cache.ts";
import { addressMatcher, covers, scopeOf } from "../accounts/scopes.ts";
import { hasValidChecksum } from "../accounts/token-format.ts";
import { Coalescer } from "../coalescer.ts";
import type { Queryable } from "../db/pool.ts";
import type { AuthFailureGuard } from "../limits/auth-failures.ts";
import type { Metrics } from "../observability/metrics.ts";
import { sendError } from "./errors.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Tokens an API process keeps at once: far more than the keys that send at one time. */
const KEPT_KEYS = 10_000;

/**
 * Every endpoint: a bearer key, looked up by its hash, the answer kept for KEY_KEPT_MS (every
 * change to a key or to what comes with it waits that long before it answers, so none outlives
 * it: src/accounts/key-cache.ts). The lookups of the requests in flight go to the database
 * together, one statement per round trip (see Coalescer) rather than one per request. A kept key
 * past its expires_at is no key. Then the key's policy: the scope the route needs
 * (src/accounts/scopes.ts) and the client addresses it may be used from, each a 403 in the route's
 * error shape.
 *
 * Bogus keys cost the one sending them: a token whose checksum says it cannot be a key is refused
 * without a lookup (once no key without a checksum is active), and a client address whose failed
 * authentications reach the limit in a minute, over every API process, gets a 429 without one.
 * The client address is `addressOf`'s (client-address.ts: behind a load balancer, not its own).
 */
export function requireApiKey(
  db: Queryable,
  lastUsedPrecisionSeconds: number,
  failures: AuthFailureGuard,
  metrics: Metrics,
  addressOf: (req: Request) => string,
): RequestHandler {
  const principals = new Coalescer<string, Principal | null>(
    (tokens) => authenticateMany(db, tokens, lastUsedPrecisionSeconds),
    { maxBatch: 100, maxInFlight: 2 },
  );
  const legacy = new LegacyKeys(db);
  const kept = new KeyCache<Principal>({ keptMs: KEY_KEPT_MS, maxEntries: KEPT_KEYS });
  /** The token's key, or why there is none: a checksum that says it cannot be one, or not found. */
  const lookUp = async (token: string): Promise<Principal | "checksum" | "unknown"> => {
    const known = kept.get(token);
    if (known && (known.expiresAt === null || known.expiresAt.getTime() > Date.now())) {
      metrics.keyLookups.inc({ answered_by: "kept" });
      return known;
    }
    if (!hasValidChecksum(token) && !(await legacy.present())) return "checksum";
    const began = kept.lookupBegins();
    const principal = await principals.take(token);
    if (!principal) return "unknown";
    metrics.keyLookups.inc({ answered_by: "database" });
    kept.keep(token, principal, began);
    return principal;
  };
  return async (req, res, next) => {
    const header = req.headers.authorization;
    if (!header) {
      metrics.authRefusals.inc({ reason: "missing" });
      return sendError(res, "missingAuthentication");
    }
    const address = addressOf(req);
    const wait = failures.refusedFor(address);
    if (wait > 0) {
      metrics.authRefusals.inc({ reason: "address_limited" });
      res.setHeader("Retry-After", String(wait));
      return sendError(res, "tooManyAuthFailures");
    }
    const token = BEARER.exec(header)?.[1];
    const principal = token ? await lookUp(token) : "checksum";
    if (typeof principal === "string") {
      metrics.authRefusals.inc({ reason: principal });
      failures.failed(address);
      return sendError(res, "invalidAuthentication");
    }
    // Most keys hold every scope: the route's scope is worked out only for a key with fewer.
    if (principal.scopes !== null) {
      // The path the router routes by: a request target in absolute form (http://host/path) has it
      // too, where originalUrl keeps the whole URL and would match no rule.
      const scope = scopeOf(req.method, req.path);
      if (scope !== null && !covers(principal.scopes, scope)) return sendError(res, "forbiddenScope");
    }
    const allowed = addressMatcher(principal.allowedIps);
    if (allowed && !allowed(address)) return sendError(res, "forbiddenAddress");
    res.locals.keyPolicy = {
      scopes: principal.scopes,
      allowedIps: principal.allowedIps,
      expiresAt: principal.expiresAt,
    };
    res.locals.accountId = principal.accountId;
    res.locals.keyId = principal.keyId;
    res.locals.currency = principal.currency;
    res.locals.webhookEvents = principal.webhookEvents;
    res.locals.sendDefaults = principal.sendDefaults;
    next();
  };
}
