import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import { isDatabaseUnavailable } from "../db/pool.ts";
import { AuthFailureGuard } from "../limits/auth-failures.ts";
import { RequestLimiter } from "../limits/request-limiter.ts";
import type { Logger } from "../logger.ts";
import { type HealthAnswer, healthzAnswer, readyzAnswer } from "../observability/health.ts";
import { countRateLimitSlice } from "../observability/metrics.ts";
import { accessLog } from "./access-log.ts";
import { requireApiKey } from "./auth.ts";
import { clientAddressOf } from "./client-address.ts";
import type { IntakeDeps } from "./deps.ts";
import { ApiError, type ErrorShape, sendError } from "./errors.ts";
import { expensiveGate } from "./expensive-gate.ts";
import { bodyError, jsonBody } from "./json-body.ts";
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

/**
 * Each endpoint answers errors in the convention the contract gives it. The middleware carries
 * its convention, so the OpenAPI check can read it off the route (test/integration/openapi.test.ts).
 */
const shape = (errorShape: ErrorShape): RequestHandler & { errorShape: ErrorShape } =>
  Object.assign<RequestHandler, { errorShape: ErrorShape }>(
    (_req, res, next) => {
      res.locals.errorShape = errorShape;
      next();
    },
    { errorShape },
  );

/** The HTTP API: Express serves every route; `app` is the HTTP server's request listener. */
export interface Intake {
  app: express.Express;
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

  // What every request goes through, in one middleware: the router's cost is per middleware.
  const observe = accessLog(deps.logger, deps.metrics);
  app.use((req, res, next) => {
    observe(req, res);
    undecodableSegmentsToInvalid(req);
    next();
  });
  const failures = new AuthFailureGuard(deps.pool, deps.config.AUTH_FAILURES_PER_MINUTE, (err) =>
    deps.logger.warn({ err }, "failed authentications not counted"),
  );
  const authenticate = requireApiKey(
    deps.pool,
    deps.config.KEY_LAST_USED_PRECISION_SECONDS,
    failures,
    deps.metrics,
    clientAddressOf(deps.config.TRUSTED_PROXIES),
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

  // The sends: their body is read after authentication, and rate limited with its recipients.
  app.post("/api/v1/sms", legacy, authenticate, json, rateLimited(limits, oneRecipient), sendSms(deps));
  const bulkJson = jsonBody(deps.config.BODY_LIMIT_BYTES);
  app.post(
    "/api/v1/sms/bulk",
    kit,
    authenticate,
    bulkJson,
    rateLimited(limits, bulkRecipients),
    sendBulk(deps),
  );
  const batchJson = jsonBody(deps.config.BATCH_BODY_LIMIT_BYTES);
  app.post(
    "/api/v1/sms/batch",
    kit,
    authenticate,
    batchJson,
    rateLimited(limits, batchRecipients),
    sendBatch(deps),
  );
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

  app.use((_req, res) => sendError(res, "notFound"));
  app.use(errorHandler(deps.logger));

  return {
    app,
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

/**
 * Every body but a bulk send's is one message or one small object: even a 10-segment text with
 * every character escaped stays far below this. Reading up to the bulk limit for them would
 * only let a client make the process allocate megabytes for nothing.
 */
const SINGLE_BODY_LIMIT_BYTES = 65_536;

/**
 * A path segment that is not valid percent-encoding cannot be an id: it is replaced by one that
 * decodes (to "%"), so the route still runs — authentication first — and answers "invalid id"
 * in its own convention, instead of the router failing before any route is chosen.
 */
function undecodableSegmentsToInvalid(req: Request): void {
  if (!req.url.includes("%")) return;
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
}

function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    if (res.headersSent) return;
    if (err instanceof ApiError) return sendError(res, err.errorName, err.validationErrors);
    const parserError = bodyError(err);
    if (parserError) return sendError(res, parserError);
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
