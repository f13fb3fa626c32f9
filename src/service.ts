import { createServer, type Server } from "node:http";
import { z } from "zod";
import { CARRIERS, OPERATORS, type Operator } from "../carriers/index.ts";
import { createDevAccountIfEmpty } from "./accounts/dev-account.ts";
import { AUDIT_RECEIPT_HOURS, AUDIT_STUCK_MINUTES, keepAudited } from "./audit/audit-pass.ts";
import { type Config, ConfigError, productionRefusal, startWarnings } from "./config.ts";
import { namingTheDatabase, openDatabase } from "./db/database.ts";
import { migrate, migrationOptions } from "./db/migrate.ts";
import { createPool, databaseTimeouts, type Pool, readinessDatabase, unboundedReads } from "./db/pool.ts";
import { keepVacuumed } from "./db/vacuum.ts";
import { type RunningDispatch, startDispatch } from "./dispatch/worker.ts";
import { transactionsWithEventJobs } from "./events/event-jobs.ts";
import { startInboundUpkeep } from "./inbound/inbound-stage.ts";
import { createIntake, type Intake } from "./intake/app.ts";
import { answerClientError } from "./intake/client-errors.ts";
import { serverOptionsFor } from "./intake/server-objects.ts";
import type { Logger } from "./logger.ts";
import { type BindState, createReadiness } from "./observability/health.ts";
import { createMetrics, initialiseSeries, type Metrics, serveMetrics } from "./observability/metrics.ts";
import { type Queue, startQueue, superviseQueues } from "./queue/boss.ts";
import { onOpenJobs, openJobsAwakeMs, startDueWatch } from "./queue/due-watch.ts";
import {
  IDLE_DUTY_POLLS,
  INBOUND_TOPIC,
  listenForWork,
  localSignals,
  type WorkSignals,
} from "./queue/wakeups.ts";
import { DEFAULT_CHUNK, DEFAULT_PAUSE_MS, keepRetention } from "./retention/retention.ts";
import { startSamplers } from "./samplers.ts";
import { SendCommitter } from "./sending/send-committer.ts";
import { loadSimulator } from "./simulator-loader.ts";
import { callbackOptions, startCallbacks } from "./webhooks/callbacks.ts";
import { outboxDue } from "./webhooks/relay.ts";

export type Role = "api" | "worker" | "all";

export interface RunningService {
  pool: Pool;
  boss: Queue;
  databaseUrl: string;
  /** The HTTP port actually bound (PORT=0 binds an ephemeral one). */
  port: number | null;
  devAccount: Awaited<ReturnType<typeof createDevAccountIfEmpty>>;
  /** The in-process carrier simulators (embedded default), when started. */
  simulators: { stop(): Promise<void> } | null;
  dispatch: RunningDispatch | null;
  metrics: Metrics;
  /** The metrics port actually bound (METRICS_PORT=0 binds an ephemeral one). */
  metricsPort: number;
  stop(): Promise<void>;
}

/**
 * The table of contents of Shiri: the stages a process runs, in the order data flows through
 * them. Every role is stateless apart from Postgres, so any number of each can share a database.
 */
export async function startService(config: Config, logger: Logger, role: Role): Promise<RunningService> {
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse())
      await stop().catch((err) => logger.error({ err }, "shutdown step failed"));
  };
  try {
    // A worker in production never binds with the simulators' credentials nor starts them.
    const refusal = role === "api" ? null : productionRefusal(config);
    if (refusal) throw new ConfigError(refusal);
    for (const warning of startWarnings(config)) logger.warn(warning);
    // 1. Postgres: the only stateful dependency (embedded when no DATABASE_URL is given).
    const database = await openDatabase(config, (line) =>
      logger.debug({ postgres: line.trim() }, "postgres"),
    );
    stops.push(database.stop);
    const timeouts = databaseTimeouts(config);
    const pool = createPool(database.url, config.PG_POOL_MAX, timeouts, config.PG_POOL_IDLE_MS);
    stops.push(() => pool.end());
    // Migrations, vacuum and the audit lift the statement timeout: the client must not give up
    // on them either. An idle process holds none of its connections.
    const unboundedPool = createPool(database.url, 2, unboundedReads(timeouts), config.PG_POOL_IDLE_MS, 0);
    stops.push(() => unboundedPool.end());
    const migrated = await migrate(unboundedPool, migrationOptions(config, logger)).catch((err: unknown) => {
      throw namingTheDatabase(err, database);
    });
    if (migrated.applied.length) logger.info({ applied: migrated.applied }, "migrations applied");

    // 2. Queue: pg-boss on the same database; sends enqueue inside their own transaction.
    const boss = await startQueue(database.url, logger, {
      superviseIntervalSeconds: config.QUEUE_SUPERVISE_SECONDS,
      dispatchJobExpireSeconds: config.DISPATCH_JOB_EXPIRE_SECONDS,
      dispatchJobHeartbeatSeconds: config.DISPATCH_JOB_HEARTBEAT_SECONDS,
      timeouts,
      pool,
    });
    stops.push(() => boss.stop({ graceful: true, timeout: 10_000 }));

    // Metrics: every role exports them, on a port of their own, with /healthz and /readyz.
    let dispatch: RunningDispatch | null = null;
    // Readiness asks on a connection of its own when requests hold every pooled one.
    const readinessConnection = readinessDatabase(pool, database.url, timeouts, config.PG_POOL_IDLE_MS);
    stops.push(() => readinessConnection.end());
    const readiness = createReadiness({
      db: readinessConnection.pick,
      ...(role === "api" ? {} : { operators: () => bindStates(dispatch, config) }),
    });
    const metrics = createMetrics();
    initialiseSeries(metrics, OPERATORS, Object.keys(config.links));
    const metricsServer = await serveMetrics(metrics, config.HOST, config.METRICS_PORT, readiness).catch(
      (err: unknown) => {
        throw listenFailure(err, "METRICS_PORT", config.HOST, config.METRICS_PORT);
      },
    );
    stops.push(() => closeServer(metricsServer));
    const samplers = startSamplers(metrics, pool, config, logger);
    stops.push(async () => samplers.stop());

    // 3. Intake: the HTTP API (request → validation → pricing and ledger → queue).
    let port: number | null = null;
    if (role !== "worker") {
      const intake = createIntake({
        pool,
        boss,
        config,
        logger,
        metrics,
        readiness,
        sends: new SendCommitter(pool, boss, {
          maxSends: config.SEND_COMMIT_MAX_SENDS,
          maxMessages: config.SEND_COMMIT_MAX_MESSAGES,
          // Leaves connections for authentication and reads while sends commit.
          maxOpen: Math.max(1, config.PG_POOL_MAX - 2),
          dispatchBatchSize: config.DISPATCH_BATCH_SIZE,
        }),
      });
      // Stops run last first: the server closes, then the limiter gives its slices back.
      stops.push(() => intake.close());
      const server = await listen(intake.app, config, logger);
      port = addressPort(server);
      stops.push(() => closeServer(server));
      logger.info({ port, host: config.HOST }, "api listening");
    }

    // 4. Dispatch: per-operator workers over SMPP → receipts → ledger and callbacks.
    let simulators: { stop(): Promise<void> } | null = null;
    // One listening connection wakes the idle loops when work is announced (src/queue/wakeups.ts).
    let signals: WorkSignals = localSignals();
    if (role !== "api") {
      const listening = await listenForWork(database.url, timeouts, logger);
      signals = listening;
      stops.push(() => listening.stop());
      const watch = startDueWatch({
        pool,
        signals,
        logger,
        pollMs: config.IDLE_POLL_MS,
        sources: [outboxDue],
      });
      stops.push(() => watch.stop());
      // pg-boss's supervision: at QUEUE_SUPERVISE_SECONDS while jobs are open, rarely otherwise.
      const supervision = superviseQueues(boss, {
        superviseMs: config.QUEUE_SUPERVISE_SECONDS * 1000,
        awakeMs: openJobsAwakeMs(config.IDLE_POLL_MS),
        logger,
      });
      const unwatched = onOpenJobs(signals, () => supervision.keepAwake());
      stops.push(async () => {
        unwatched();
        await supervision.stop();
      });
      if (config.START_SIMULATORS) {
        const running = await startCarrierSimulators(config, logger);
        simulators = running;
        stops.push(() => running.stop());
      }
      const started = startDispatch({ config, pool, boss, logger, metrics, signals });
      dispatch = started;
      stops.push(() => started.stop());
      // Inbound: the links store what handsets send; this makes whole what never completed and
      // sends keyword replies a process left pending.
      const inbound = startInboundUpkeep({
        pool,
        boss,
        transact: transactionsWithEventJobs(pool, boss, config.WEBHOOK_BATCH_SIZE),
        logger,
        metrics,
        repeatWindowSeconds: config.INBOUND_REPEAT_WINDOW_SECONDS,
        dispatchBatchSize: config.DISPATCH_BATCH_SIZE,
        maxSegments: config.MAX_SEGMENTS,
        reassemblySeconds: config.INBOUND_REASSEMBLY_SECONDS,
        intervalMs: config.INBOUND_SWEEP_MS,
        idleMs: IDLE_DUTY_POLLS * config.IDLE_POLL_MS,
      });
      const unheard = signals.on(INBOUND_TOPIC, () => inbound.wake());
      stops.push(async () => {
        unheard();
        await inbound.stop();
      });
    }

    // 5. Webhooks: the events outbox → signed callbacks, never on the send or dispatch path.
    if (role !== "api") {
      const webhooks = startCallbacks({
        pool,
        boss,
        logger,
        metrics,
        options: callbackOptions(config),
        signals,
      });
      stops.push(() => webhooks.stop());
    }

    // 6. Upkeep: the churned tables vacuumed by Shiri itself where the server's autovacuum is off;
    //    rows past their retention deleted (final messages, events, idempotency keys; never the ledger).
    if (role !== "api") {
      const vacuum = keepVacuumed(unboundedPool, {
        mode: config.SELF_VACUUM,
        intervalMs: config.SELF_VACUUM_INTERVAL_MS,
        onPass: (pass) => {
          if (pass.vacuumed.length + pass.analyzed.length > 0) logger.info(pass, "tables vacuumed");
        },
        onError: (err) => logger.error({ err }, "vacuum pass failed"),
      });
      stops.push(() => vacuum.stop());
      const retention = keepRetention(pool, {
        policy: {
          messageDays: config.MESSAGE_RETENTION_DAYS,
          webhookEventDays: config.WEBHOOK_RETENTION_DAYS,
          idempotencyHours: config.IDEMPOTENCY_TTL_HOURS,
          chunk: DEFAULT_CHUNK,
          pauseMs: DEFAULT_PAUSE_MS,
        },
        intervalMs: config.RETENTION_INTERVAL_MS,
        onPass: (pass) => {
          if (Object.values(pass).some((n) => n > 0))
            logger.info({ deleted: pass }, "rows past retention deleted");
        },
        onError: (err) => logger.error({ err }, "retention pass failed"),
      });
      stops.push(() => retention.stop());
      const audited = keepAudited(unboundedPool, {
        intervalMs: config.AUDIT_INTERVAL_MS,
        firstPassMs: Math.min(10_000, config.AUDIT_INTERVAL_MS),
        stuckMinutes: AUDIT_STUCK_MINUTES,
        receiptHours: AUDIT_RECEIPT_HOURS,
        validityHours: config.MESSAGE_VALIDITY_HOURS,
        onPass: (pass) => {
          for (const [kind, n] of Object.entries(pass.problems)) metrics.auditProblems.set({ kind }, n);
          metrics.auditLastPass.set(Date.now() / 1000);
          if (Object.values(pass.problems).some((n) => n > 0)) logger.warn(pass, "audit found problems");
        },
        onError: (err) => logger.error({ err }, "audit pass failed"),
      });
      stops.push(() => audited.stop());
    }

    // Last, once every listener is up: a start that fails before this leaves no account whose
    // key (shown only once) nobody saw, and the next start creates and prints it.
    const devAccount = database.embedded ? await createDevAccountIfEmpty(pool) : null;
    return {
      pool,
      boss,
      databaseUrl: database.url,
      port,
      devAccount,
      simulators,
      dispatch,
      metrics,
      metricsPort: addressPort(metricsServer),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** How binds rank for an operator's readiness: the best of its route's links counts. */
const BIND_RANK: readonly BindState[] = ["bound", "standby", "starting", "unbound", "stopped"];

/** Each operator's bind as this worker holds it, for readiness: the best of its route's links. */
function bindStates(dispatch: RunningDispatch | null, config: Config): Record<string, BindState> {
  return Object.fromEntries(
    OPERATORS.map((op) => {
      const states = config.routes[op].map((link) => dispatch?.workers[link]?.bindState ?? "starting");
      const best = BIND_RANK.find((state) => states.includes(state)) ?? "starting";
      return [op, best];
    }),
  );
}

/**
 * The simulators listen exactly where the workers' SMPP settings point. Loaded at run time
 * (src/simulator-loader.ts): a development convenience, not in the production build.
 */
/** What Node's listen errors carry besides their code. */
const LISTEN_ERROR = z.object({ address: z.string(), port: z.number() });

async function startCarrierSimulators(config: Config, logger: Logger): Promise<{ stop(): Promise<void> }> {
  const simulator = await loadSimulator();
  const portOf = (operator: Operator) => config.links[operator]?.port ?? CARRIERS[operator].smpp.port;
  return simulator.startEmbedded({ portOf, logger }).catch((err: unknown) => {
    // Each simulator listens where its operator's link connects: name that link's setting.
    const taken = LISTEN_ERROR.safeParse(err);
    const operator = taken.success ? OPERATORS.find((op) => portOf(op) === taken.data.port) : undefined;
    if (!taken.success || operator === undefined) throw err;
    throw listenFailure(err, `SMPP_${operator.toUpperCase()}_PORT`, taken.data.address, taken.data.port);
  });
}

function listen(
  listener: Intake["app"],
  config: Pick<Config, "HOST" | "PORT" | "HTTP_KEEP_ALIVE_TIMEOUT_MS">,
  logger: Logger,
): Promise<Server> {
  const keepAliveTimeoutMs = config.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const server = createServer(serverOptionsFor(listener), listener).listen(config.PORT, config.HOST);
    server.on("clientError", answerClientError(logger));
    // A load balancer reuses an idle connection until its own idle timeout (60 s by default on AWS
    // ALB and for nginx's upstream keepalive): if Node closed it first (its default is 5 s), a
    // request sent at that moment meets a closed socket. Node wants headersTimeout above it too.
    server.keepAliveTimeout = keepAliveTimeoutMs;
    server.headersTimeout = keepAliveTimeoutMs + 1_000;
    server.once("listening", () => resolve(server));
    server.once("error", (err) => reject(listenFailure(err, "PORT", config.HOST, config.PORT)));
  });
}

/**
 * A port that cannot be listened on, in words that name the setting that chose it: Node's own
 * ("listen EADDRINUSE 0.0.0.0:3000") leaves the operator to guess between PORT and METRICS_PORT.
 */
function listenFailure(err: unknown, setting: string, host: string, port: number): unknown {
  const code = err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
  const where = `${host}:${port}`;
  if (code === "EADDRINUSE")
    return new Error(
      `${setting}=${port}: ${where} is already in use by another process (EADDRINUSE): stop it or set ${setting} to a free port`,
      { cause: err },
    );
  if (code === "EACCES")
    return new Error(
      `${setting}=${port}: not allowed to listen on ${where} (EACCES): choose a port above 1023`,
      {
        cause: err,
      },
    );
  if (code === "EADDRNOTAVAIL")
    return new Error(
      `HOST=${host}: no such address on this machine to listen on for ${setting} (EADDRNOTAVAIL)`,
      {
        cause: err,
      },
    );
  return err;
}

function addressPort(server: Server): number {
  const address = server.address();
  return typeof address === "object" && address ? address.port : 0;
}

/** Stops accepting, lets in-flight requests finish, then drops idle keep-alive connections. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // A client holding a request open forever must not hold shutdown hostage.
    setTimeout(() => server.closeAllConnections(), 10_000).unref();
  });
}
