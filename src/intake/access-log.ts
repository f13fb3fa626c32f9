import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import { type Logger, urlForLog } from "../logger.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The request id (the client's X-Request-Id when it is a plain token, else a new one, echoed in
 * the answer) and one log line per request once it is answered: method, path (without the query's
 * values or a number in it, see urlForLog), status, account, time taken — nothing that could hold
 * a key, a number or a text. A few lines by hand instead of
 * pino-http, which builds a child logger for every request that nothing here uses.
 */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const given = req.headers["x-request-id"];
    const id = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader("X-Request-Id", id);
    res.once("finish", () => {
      logger.info(
        {
          req: { id, method: req.method, url: urlForLog(req.originalUrl) },
          res: { statusCode: res.statusCode },
          account_id: res.locals.accountId,
          responseTime: Number(process.hrtime.bigint() - started) / 1e6,
        },
        "request completed",
      );
    });
    next();
  };
}
