import type { RequestHandler } from "express";
import { authenticateMany, LegacyKeys, type Principal } from "../accounts/api-keys.ts";
import { addressMatcher, covers, scopeOf } from "../accounts/scopes.ts";
import { hasValidChecksum } from "../accounts/token-format.ts";
import { Coalescer } from "../coalescer.ts";
import type { Queryable } from "../db/pool.ts";
import type { AuthFailureGuard } from "../limits/auth-failures.ts";
import type { Metrics } from "../observability/metrics.ts";
import { sendError } from "./errors.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Every endpoint: a bearer key, looked up by its hash on every request (no cache to go stale).
 * The lookups of the requests in flight go to the database together, one statement per round
 * trip (see Coalescer) rather than one per request. Then the key's policy: the scope the route
 * needs (src/accounts/scopes.ts) and the client addresses it may be used from, each a 403 in the
 * route's error shape.
 *
 * Bogus keys cost the one sending them: a token whose checksum says it cannot be a key is refused
 * without a lookup (once no key without a checksum is active), and a client address whose failed
 * authentications reach the limit in a minute, over every API process, gets a 429 without one.
 */
export function requireApiKey(
  db: Queryable,
  lastUsedPrecisionSeconds: number,
  failures: AuthFailureGuard,
  metrics: Metrics,
): RequestHandler {
  const principals = new Coalescer<string, Principal | null>(
    (tokens) => authenticateMany(db, tokens, lastUsedPrecisionSeconds),
    { maxBatch: 100, maxInFlight: 2 },
  );
  const legacy = new LegacyKeys(db);
  return async (req, res, next) => {
    const header = req.headers.authorization;
    if (!header) {
      metrics.authRefusals.inc({ reason: "missing" });
      return sendError(res, "missingAuthentication");
    }
    const address = req.socket.remoteAddress ?? "";
    const wait = failures.refusedFor(address);
    if (wait > 0) {
      metrics.authRefusals.inc({ reason: "address_limited" });
      res.setHeader("Retry-After", String(wait));
      return sendError(res, "tooManyAuthFailures");
    }
    const token = BEARER.exec(header)?.[1];
    const mayExist = token !== undefined && (hasValidChecksum(token) || (await legacy.present()));
    const principal = token && mayExist ? await principals.take(token) : null;
    if (!principal) {
      metrics.authRefusals.inc({ reason: mayExist ? "unknown" : "checksum" });
      failures.failed(address);
      return sendError(res, "invalidAuthentication");
    }
    // Most keys hold every scope: the route's scope is worked out only for a key with fewer.
    if (principal.scopes !== null) {
      const scope = scopeOf(req.method, req.originalUrl.split("?")[0] ?? "");
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
