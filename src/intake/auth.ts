import { authenticateMany, type Principal } from "../accounts/api-keys.ts";
import { Coalescer } from "../coalescer.ts";
import type { Queryable } from "../db/pool.ts";
import { sendError } from "./errors.ts";
import type { Handler } from "./handler.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Every endpoint: a bearer key, looked up by its hash on every request (no cache to go stale).
 * The lookups of the requests in flight go to the database together, one statement per round
 * trip (see Coalescer) rather than one per request.
 */
export function requireApiKey(db: Queryable, lastUsedPrecisionSeconds: number): Handler {
  const principals = new Coalescer<string, Principal | null>(
    (tokens) => authenticateMany(db, tokens, lastUsedPrecisionSeconds),
    { maxBatch: 100, maxInFlight: 2 },
  );
  return async (req, res, next) => {
    const header = req.headers.authorization;
    if (!header) return sendError(res, "missingAuthentication");
    const token = BEARER.exec(header)?.[1];
    const principal = token ? await principals.take(token) : null;
    if (!principal) return sendError(res, "invalidAuthentication");
    res.locals.accountId = principal.accountId;
    res.locals.keyId = principal.keyId;
    res.locals.currency = principal.currency;
    res.locals.webhookEvents = principal.webhookEvents;
    res.locals.sendDefaults = principal.sendDefaults;
    next();
  };
}
