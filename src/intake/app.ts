import { isUtf8 } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";
import express, { type RequestHandler, type Response } from "express";
import { isDatabaseUnavailable } from "../db/pool.ts";
import { AuthFailureGuard } from "../limits/auth-failures.ts";
import { RequestLimiter } from "../limits/request-limiter.ts";
import type { Logger } from "../logger.ts";
import { type HealthAnswer, healthzAnswer, readyzAnswer } from "../observability/health.ts";
import { countRateLimitSlice, type Metrics } from "../observability/metrics.ts";
import { accessLog } from "./access-log.ts";
import { requireApiKey } from "./auth.ts";
import type { IntakeDeps } from "./deps.ts";
import { ApiError, type ErrorShape, sendError } from "./errors.ts";
import { expensiveGate } from "./expensive-gate.ts";
import type { ErrorHandler, Handler, Locals as IntakeLocals } from "./handler.ts";
import { ENDPOINTS } from "./openapi/endpoints.ts";
import { batchRecipients, bulkRecipients, oneRecipient, rateLimited } from "./rate-limit.ts";
import { getBalance, getSenderIds } from "./routes/account.ts";
import { createToken, listTokens, revokeToken } from "./routes/api-tokens.ts";
import { cancelBulk, cancelSms } from "./routes/cancel-sms.ts";
import { exportSms } from "./routes/export-sms.ts";
import { getBulk } from "./routes/get-bulk.ts";
import { getSms } from "./routes/get-sms.ts";
import { getInboundMessage, getInboundNumbers, searchInboundMessages } from "./routes/inbound.ts";
import { serveOpenApi } from "./routes/openapi.ts";
import { addAccountOptOut, listAccountOptOuts, removeAccountOptOut } from "./routes/opt-outs.ts";
import { previewSms } from "./routes/preview-sms.ts";
import { searchSms } from "./routes/search-sms.ts";
import { sendBatch } from "./routes/send-batch.ts";
import { sendBulk } from "./routes/send-bulk.ts";
import { sendSms } from "./routes/send-sms.ts";
import { deleteWebhook, getWebhook, putWebhook, rotateWebhookSecret } from "./routes/webhook.ts";
import { getDeliveries, redeliverMany, redeliverOne } from "./routes/webhook-deliveries.ts";
import { type LaneRoute, sendLane } from "./send-lane.ts";

declare global {
  namespace Express {
    interface Locals extends IntakeLocals {}
  }
}

/**
 * Each endpoint answers errors in the convention the contract gives it. The middleware carries
 * its convention, so the OpenAPI check can read it off the route (test/integration/openapi.test.ts).
 */
const shape = (errorShape: ErrorShape): Handler & { errorShape: ErrorShape } =>
  Object.assign<Handler, { errorShape: ErrorShape }>(
    (_req, res, next) => {
      res.locals.errorShape = errorShape;
      next();
    },
    { errorShape },
  );

/** The HTTP API: Express for every route, and the send lane in front of it for the two send routes. */
export interface Intake {
  app: express.Express;
  /** The server's request listener: the send lane takes what it can, Express the rest. */
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Once the server no longer takes requests: gives the rate limits' unused slices back. */
  close(): Promise<void>;
}

export function createIntake(deps: IntakeDeps): Intake {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  // Health first: probes are neither logged, counted, authenticated nor rate limited.
  app.get("/healthz", (_req, res) => answerHealth(res, healthzAnswer()));
  app.get("/readyz", async (_req, res) => answerHealth(res, await readyzAnswer(deps.readiness.api)));

  const everyRequest = [accessLog(deps.logger), countRequests(deps.metrics)];
  app.use(...everyRequest);
  app.use(undecodableSegmentsToInvalid);
  const failures = new AuthFailureGuard(deps.pool, deps.config.AUTH_FAILURES_PER_MINUTE, (err) =>
    deps.logger.warn({ err }, "failed authentications not counted"),
  );
  const authenticate = requireApiKey(
    deps.pool,
    deps.config.KEY_LAST_USED_PRECISION_SECONDS,
    failures,
    deps.metrics,
  );
  const limiter = requestLimiter(deps);
  const limits = { limiter, metrics: deps.metrics, logger: deps.logger };
  // Every authenticated request is rate limited once; a send after its body is read, so that its
  // recipients are taken in the same statement as the request.
  const auth = [authenticate, rateLimited(limits)];
  const singleLimit = Math.min(deps.config.BODY_LIMIT_BYTES, SINGLE_BODY_LIMIT_BYTES);
  // A preview takes any send's body, a batch's included.
  const previewJson = jsonBody(Math.max(deps.config.BODY_LIMIT_BYTES, deps.config.BATCH_BODY_LIMIT_BYTES));
  const json = jsonBody(singleLimit);
  const legacy = shape("legacy");
  const kit = shape("kit");

  // The send routes, on Express and in the send lane alike.
  const sendRoutes: LaneRoute[] = [
    {
      path: "/api/v1/sms",
      bodyLimit: singleLimit,
      beforeBody: [legacy, authenticate],
      afterBody: [rateLimited(limits, oneRecipient), sendSms(deps)],
    },
    {
      path: "/api/v1/sms/bulk",
      bodyLimit: deps.config.BODY_LIMIT_BYTES,
      beforeBody: [kit, authenticate],
      afterBody: [rateLimited(limits, bulkRecipients), sendBulk(deps)],
    },
    {
      path: "/api/v1/sms/batch",
      bodyLimit: deps.config.BATCH_BODY_LIMIT_BYTES,
      beforeBody: [kit, authenticate],
      afterBody: [rateLimited(limits, batchRecipients), sendBatch(deps)],
    },
  ];
  for (const route of sendRoutes)
    app.post(route.path, ...route.beforeBody, jsonBody(route.bodyLimit), ...route.afterBody);
  app.post("/api/v1/sms/preview", kit, auth, previewJson, previewSms(deps));
  // Searches and exports share a budget of connections of their own (expensive-gate.ts).
  const expensive = expensiveGate(Math.max(1, deps.config.PG_POOL_MAX - 2));
  app.get("/api/v1/sms", kit, auth, expensive, searchSms(deps));
  // Before /api/v1/sms/:id, which would take "export.csv" for an id.
  app.get("/api/v1/sms/export.csv", kit, auth, expensive, exportSms(deps));
  app.get("/api/v1/sms/bulk/:bulk_id", kit, auth, getBulk(deps));
  app.get("/api/v1/sms/:id", legacy, auth, getSms(deps));
  // Extensions under the contract's paths, in the Kit conventions like every new endpoint.
  app.delete("/api/v1/sms/bulk/:bulk_id", kit, auth, cancelBulk(deps));
  app.delete("/api/v1/sms/:id", kit, auth, cancelSms(deps));
  app.post("/api/v1/api-tokens", kit, auth, json, createToken(deps));
  app.get("/api/v1/api-tokens", kit, auth, listTokens(deps));
  app.delete("/api/v1/api-tokens/:id", kit, auth, revokeToken(deps));
  app.get("/api/v1/balance", kit, auth, getBalance(deps));
  app.get("/api/v1/sender-ids", kit, auth, getSenderIds(deps));
  app.get("/api/v1/inbound-numbers", kit, auth, getInboundNumbers(deps));
  app.get("/api/v1/inbound", kit, auth, searchInboundMessages(deps));
  app.get("/api/v1/inbound/:id", kit, auth, getInboundMessage(deps));
  app.get("/api/v1/opt-outs", kit, auth, listAccountOptOuts(deps));
  app.post("/api/v1/opt-outs", kit, auth, json, addAccountOptOut(deps));
  app.delete("/api/v1/opt-outs/:number", kit, auth, removeAccountOptOut(deps));
  app.get("/api/v1/webhook", kit, auth, getWebhook(deps));
  app.put("/api/v1/webhook", kit, auth, json, putWebhook(deps));
  app.delete("/api/v1/webhook", kit, auth, deleteWebhook(deps));
  app.post("/api/v1/webhook/secret", kit, auth, rotateWebhookSecret(deps));
  app.get("/api/v1/webhook/deliveries", kit, auth, getDeliveries(deps));
  app.post("/api/v1/webhook/deliveries/redeliver", kit, auth, json, redeliverMany(deps));
  app.post("/api/v1/webhook/deliveries/:event_id/redeliver", kit, auth, redeliverOne(deps));
  // Every route above has an entry in ENDPOINTS (src/intake/openapi/endpoints.ts), or a test fails.
  app.get("/api/v1/openapi.json", kit, serveOpenApi(ENDPOINTS, deps.config));

  const notFound: Handler = (_req, res) => sendError(res, "notFound");
  const onError = errorHandler(deps.logger);
  app.use(notFound);
  app.use(onError);

  const lane = sendLane({ routes: sendRoutes, first: everyRequest, onError, notFound });
  return {
    app,
    listener: (req, res) => {
      if (!lane(req, res)) app(req, res);
    },
    close: async () => {
      await failures.close();
      await limiter?.close();
    },
  };
}

function requestLimiter(deps: IntakeDeps): RequestLimiter | null {
  if (deps.config.RATE_LIMITS === "off") return null;
  return new RequestLimiter(
    deps.pool,
    {
      keyRequestsPerSecond: deps.config.RATE_LIMIT_KEY_PER_SECOND,
      accountRequestsPerSecond: deps.config.RATE_LIMIT_ACCOUNT_PER_SECOND,
      recipientsPerMinute: deps.config.RATE_LIMIT_RECIPIENTS_PER_MINUTE,
    },
    {
      onBatch: (size) => deps.metrics.rateLimitBatch.observe(size),
      onSlice: (scope, units) => countRateLimitSlice(deps.metrics, scope, units),
      onLocal: () => deps.metrics.rateLimitLocal.inc(),
      onGiveBack: (scope, units) => deps.metrics.rateLimitReturnedUnits.inc({ scope }, units),
      onError: (err) => deps.logger.warn({ err }, "unused rate limit slices not given back"),
    },
  );
}

function answerHealth(res: Response, answer: HealthAnswer): void {
  res.status(answer.statusCode).set(answer.headers).json(answer.body);
}

/** Requests by the route that answered them (its pattern, so ids never become label values). */
function countRequests(metrics: Metrics): Handler {
  return (req, res, next) => {
    const started = performance.now();
    res.once("finish", () => {
      const route = req.route?.path;
      const labels = { method: req.method, route: typeof route === "string" ? route : "unmatched" };
      metrics.httpRequests.inc({ ...labels, status: String(res.statusCode) });
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
    });
    next();
  };
}

/**
 * Every body but a bulk send's is one message or one small object: even a 10-segment text with
 * every character escaped stays far below this. Reading up to the bulk limit for them would
 * only let a client make the process allocate megabytes for nothing.
 */
const SINGLE_BODY_LIMIT_BYTES = 65_536;

function jsonBody(limit: number): RequestHandler[] {
  return [
    refuseDeclaredOversize(limit),
    express.json({ limit, type: ["application/json", "application/*+json"], verify: refuseInvalidUtf8 }),
  ];
}

/**
 * A body whose Content-Length is over the limit is answered 413 at once and its connection
 * closed, instead of being read to the end and thrown away: draining megabytes of refused
 * bodies in 64 KiB reads left the process's heap that much bigger for good.
 */
function refuseDeclaredOversize(limit: number): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.headers["content-length"]);
    if (!(declared > limit)) return next();
    res.setHeader("Connection", "close");
    sendError(res, "payloadTooLarge");
  };
}

/**
 * The JSON parser would decode bytes that are not UTF-8 into U+FFFD and send that to a handset;
 * such a body is refused instead (400, the "unreadable body" error), as the README promises.
 * Other charsets (UTF-16, UTF-32) are decoded by the parser.
 */
function refuseInvalidUtf8(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if ((encoding === "utf-8" || encoding === "utf8") && !isUtf8(body))
    throw Object.assign(new Error("request body is not valid UTF-8"), { type: "charset.invalid" });
}

/** body-parser's errors carry a `type`; zlib's (a Content-Encoding the bytes do not match) only a 4xx status. */
function bodyError(err: unknown): "tooLarge" | "unreadable" | "malformed" | null {
  if (typeof err !== "object" || err === null) return null;
  const type = "type" in err && typeof err.type === "string" ? err.type : undefined;
  const status = "status" in err && typeof err.status === "number" ? err.status : undefined;
  if (type === "entity.too.large" || status === 413) return "tooLarge";
  if (type === "entity.parse.failed") return "malformed";
  if (type !== undefined || (status !== undefined && status >= 400 && status < 500)) return "unreadable";
  return null;
}

/**
 * A path segment that is not valid percent-encoding cannot be an id: it is replaced by one that
 * decodes (to "%"), so the route still runs — authentication first — and answers "invalid id"
 * in its own convention, instead of the router failing before any route is chosen.
 */
const undecodableSegmentsToInvalid: RequestHandler = (req, _res, next) => {
  const [path = "", query] = req.url.split("?", 2);
  let changed = false;
  const segments = path.split("/").map((segment) => {
    try {
      decodeURIComponent(segment);
      return segment;
    } catch {
      changed = true;
      return "%25";
    }
  });
  if (changed) req.url = segments.join("/") + (query === undefined ? "" : `?${query}`);
  next();
};

function errorHandler(logger: Logger): ErrorHandler {
  return (err, _req, res, _next) => {
    if (res.headersSent) return;
    if (err instanceof ApiError) return sendError(res, err.errorName, err.validationErrors);
    const parserError = bodyError(err);
    if (parserError === "tooLarge") return sendError(res, "payloadTooLarge");
    if (parserError === "malformed") return sendError(res, "malformedJson");
    if (parserError === "unreadable") return sendError(res, "unreadableBody");
    // The database lost, refused, overloaded or timed out: the request was fine, so the client is
    // told to come back (503 with Retry-After), not that something broke (500).
    if (isDatabaseUnavailable(err)) {
      logger.warn({ err, req: { id: res.locals.requestId } }, "database unavailable");
      return sendError(res, "unavailable");
    }
    logger.error({ err, req: { id: res.locals.requestId } }, "unhandled error");
    sendError(res, "internal");
  };
}
