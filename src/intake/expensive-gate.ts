import type { RequestHandler } from "express";
import { sendError } from "./errors.ts";

/**
 * Searches and CSV exports have a budget of their own: at most `limit` of them in flight in this
 * process, so however many a client sends they never hold every connection of the pool the sends
 * need. One more is answered 429 at once (Retry-After: 1) rather than queued behind them.
 */
export function expensiveGate(limit: number): RequestHandler {
  let inFlight = 0;
  return (_req, res, next) => {
    if (inFlight >= limit) {
      res.setHeader("Retry-After", "1");
      return sendError(res, "tooManyExpensive");
    }
    inFlight++;
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      inFlight--;
    };
    res.once("finish", end);
    res.once("close", end);
    next();
  };
}
