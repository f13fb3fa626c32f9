import { randomUUID } from "node:crypto";
import type { Request, Response } from "express";
import { type Logger, urlForLog } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * What every request leaves behind: its id (the client's X-Request-Id when it is a plain token,
 * else a new one, echoed in the answer), one log line once it is answered (method, path without
 * the query's values or a number in it, see urlForLog, status, account, time taken — nothing
 * that could hold a key, a number or a text), and its count and duration by the route that
 * answered it (its pattern, so ids never become label values). A few lines by hand instead of
 * pino-http, which builds a child logger for every request that nothing here uses; one 'finish'
 * listener for both, as every listener is work on every request.
 *
 * The line goes through a child logger without the redaction paths: its fields are fixed above and
 * none can hold a secret, and the paths' wildcards, walked on every line, cost more than the rest
 * of the line. When info is off, the line is not built at all.
 */
export function accessLog(logger: Logger, metrics: Metrics): (req: Request, res: Response) => void {
  const lines = logger.child({}, { redact: { paths: [] } });
  return (req, res) => {
    const started = performance.now();
    const given = req.headers["x-request-id"];
    const id = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader("X-Request-Id", id);
    res.once("finish", () => {
      const seconds = (performance.now() - started) / 1000;
      if (lines.isLevelEnabled("info"))
        lines.info(
          {
            req: { id, method: req.method, url: urlForLog(req.originalUrl) },
            res: { statusCode: res.statusCode },
            account_id: res.locals.accountId,
            responseTime: seconds * 1000,
          },
          "request completed",
        );
      const route = req.route?.path;
      const labels = { method: req.method, route: typeof route === "string" ? route : "unmatched" };
      metrics.httpRequests.inc({ ...labels, status: String(res.statusCode) });
      metrics.httpDuration.observe(labels, seconds);
    });
  };
}
