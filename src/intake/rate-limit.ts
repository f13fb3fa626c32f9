import type { Request, RequestHandler, Response } from "express";
import type { LimitState, RateLimitDecision } from "../limits/rate-limits.ts";
import type { RequestLimiter } from "../limits/request-limiter.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { ApiError, sendError } from "./errors.ts";

/**
 * Rate limits on authenticated requests (src/limits): one decision per request, after the key
 * is known and, on the send endpoints, after the body is read, so a send takes its requests and
 * its recipients in one decision (out of the process's slices, or in one statement: src/limits).
 * Over a limit: 429 in the endpoint's own convention with Retry-After. Every decided answer
 * carries RateLimit-Limit, -Remaining and -Reset for the limit nearest its end, and
 * RateLimit-Policy listing every limit that applied.
 */
export interface RateLimitDeps {
  /** Null when rate limits are switched off (RATE_LIMITS=off). */
  limiter: RequestLimiter | null;
  metrics: Metrics;
  logger: Logger;
}

/** How many recipients a request sends to, as far as its body says before validation. */
export type RecipientsOf = (req: Request) => number;

export const noRecipients: RecipientsOf = () => 0;
export const oneRecipient: RecipientsOf = () => 1;
/** A bulk body's `to` array; a body that has none sends nothing (and fails validation). */
export const bulkRecipients: RecipientsOf = (req) => {
  const to: unknown = (req.body as { to?: unknown } | undefined)?.to;
  return Array.isArray(to) ? to.length : 0;
};

/** A batch body's `messages` array: a message each. */
export const batchRecipients: RecipientsOf = (req) => {
  const messages: unknown = (req.body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? messages.length : 0;
};

export function rateLimited(deps: RateLimitDeps, recipientsOf: RecipientsOf = noRecipients): RequestHandler {
  const { limiter, metrics, logger } = deps;
  if (!limiter) return (_req, _res, next) => next();
  return async (req, res, next) => {
    const recipients = recipientsOf(req);
    const decision = await limiter.take({
      keyId: res.locals.keyId,
      accountId: res.locals.accountId,
      recipients,
    });
    writeHeaders(res, decision);
    if (!decision.allowed) {
      const refusing = refusingLimit(decision);
      if (refusing.retryMs < 0) {
        // More recipients than the account may send in a whole minute: waiting cannot help.
        throw new ApiError("validation", [
          {
            field: "to",
            description: `must contain at most ${refusing.quota} recipients (the account's recipients per minute)`,
          },
        ]);
      }
      metrics.rateLimited.inc({ scope: refusing.scope });
      res.setHeader("Retry-After", String(Math.max(1, Math.ceil(refusing.retryMs / 1000))));
      return sendError(res, "tooManyRequests");
    }
    if (recipients > 0 && decision.limits.some((l) => l.scope === "recipients")) {
      // A send that was not accepted sent nothing: its recipients go back to the bucket.
      res.once("finish", () => {
        if (res.statusCode < 300) return;
        limiter.giveBack(res.locals.accountId, recipients).catch((err: unknown) => {
          logger.warn(
            { err, account_id: res.locals.accountId },
            "recipients not given back to the rate limit",
          );
        });
      });
    }
    next();
  };
}

/** The limit that refused: the one with the longest wait (-1, never, longest of all). */
function refusingLimit(decision: RateLimitDecision): LimitState {
  const waitOf = (l: LimitState) => (l.retryMs < 0 ? Number.POSITIVE_INFINITY : l.retryMs);
  return decision.limits.reduce((a, b) => (waitOf(b) > waitOf(a) ? b : a));
}

/** The limit a client is shown: the one that refused it, else the one with the least left. */
function shownLimit(decision: RateLimitDecision): LimitState | undefined {
  if (decision.limits.length === 0) return undefined;
  if (!decision.allowed) return refusingLimit(decision);
  const left = (l: LimitState) => l.remaining / l.quota;
  return decision.limits.reduce((a, b) => (left(b) < left(a) ? b : a));
}

function writeHeaders(res: Response, decision: RateLimitDecision): void {
  const shown = shownLimit(decision);
  if (!shown) return;
  res.setHeader("RateLimit-Limit", String(shown.quota));
  res.setHeader("RateLimit-Remaining", String(shown.remaining));
  res.setHeader("RateLimit-Reset", String(Math.ceil(shown.resetMs / 1000)));
  res.setHeader("RateLimit-Policy", decision.limits.map((l) => `${l.quota};w=${l.windowSeconds}`).join(", "));
}
