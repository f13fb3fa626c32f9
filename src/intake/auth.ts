import type { RequestHandler } from "express";
import { authenticate } from "../accounts/api-keys.ts";
import type { Queryable } from "../db/pool.ts";
import { sendError } from "./errors.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Every endpoint: a bearer key, looked up by its hash on every request (no cache to go stale). */
export function requireApiKey(db: Queryable, lastUsedPrecisionSeconds: number): RequestHandler {
  return async (req, res, next) => {
    const header = req.headers.authorization;
    if (!header) return sendError(res, "missingAuthentication");
    const token = BEARER.exec(header)?.[1];
    const principal = token ? await authenticate(db, token, lastUsedPrecisionSeconds) : null;
    if (!principal) return sendError(res, "invalidAuthentication");
    res.locals.accountId = principal.accountId;
    res.locals.keyId = principal.keyId;
    res.locals.currency = principal.currency;
    res.locals.webhookEvents = principal.webhookEvents;
    next();
  };
}
