import { type MigrationStatus, migrationStatus } from "../db/migrate.ts";
import { isDatabaseUnavailable, type Queryable } from "../db/pool.ts";

/**
 * Liveness and readiness, for load balancers and orchestrators: GET /healthz (the process
 * answers) and GET /readyz (it can do its job) on the API port and on every role's metrics port.
 * No authentication, no rate limit, nothing from the request is used.
 */

/**
 * A worker's hold on one operator: `bound` (its SMPP session is up), `standby` (every bind slot
 * the carrier allows is held by other workers), `unbound` (it holds a slot but is not bound: the
 * carrier is unreachable or refuses the bind), `starting`, `stopped`.
 */
export type BindState = "starting" | "bound" | "unbound" | "standby" | "stopped";

export interface ReadinessReport {
  status: "ready" | "not ready";
  checks: {
    database: { ok: boolean; error?: DatabaseError };
    migrations?: { ok: boolean; applied: number; expected: number; missing: string[] };
    operators?: Record<string, { ok: boolean; state: BindState }>;
  };
}

export interface Readiness {
  /** What the API needs: the database reachable and migrated as far as this code expects. */
  api(): Promise<ReadinessReport>;
  /** What the whole process needs: the API's checks and, for a worker, every operator's bind. */
  process(): Promise<ReadinessReport>;
}

/** A probe waits this long for the database, then says it timed out. */
const DATABASE_TIMEOUT_MS = 1_000;
/** The database is asked at most this often, however often the endpoints are: they are public. */
const CACHE_MS = 1_000;

type DatabaseError = "unreachable" | "timeout" | "error";
type DatabaseChecks = Pick<ReadinessReport["checks"], "database" | "migrations">;

export function createReadiness(opts: {
  /** Where the database is asked, chosen at each check (src/db/pool.ts readinessDatabase). */
  db: () => Queryable;
  /** Per operator, for processes that dispatch; absent for the api role. */
  operators?: () => Record<string, BindState>;
  cacheMs?: number;
}): Readiness {
  const cacheMs = opts.cacheMs ?? CACHE_MS;
  let last: { at: number; checks: DatabaseChecks } | null = null;
  let running: Promise<DatabaseChecks> | null = null;
  // The query of a check that timed out, still running: the next check waits on it rather than
  // piling another one onto a database that does not answer.
  let query: Promise<MigrationStatus | DatabaseError> | null = null;
  const ask = () =>
    (query ??= migrationStatus(opts.db())
      .catch((err: unknown) => (isDatabaseUnavailable(err) ? ("unreachable" as const) : ("error" as const)))
      .finally(() => {
        query = null;
      }));

  const databaseChecks = (): Promise<DatabaseChecks> => {
    if (last && performance.now() - last.at < cacheMs) return Promise.resolve(last.checks);
    running ??= checkDatabase(ask()).then((checks) => {
      last = { at: performance.now(), checks };
      running = null;
      return checks;
    });
    return running;
  };

  const report = (checks: ReadinessReport["checks"]): ReadinessReport => {
    const ok =
      checks.database.ok &&
      checks.migrations?.ok === true &&
      Object.values(checks.operators ?? {}).every((o) => o.ok);
    return { status: ok ? "ready" : "not ready", checks };
  };

  return {
    api: async () => report(await databaseChecks()),
    process: async () => {
      const checks: ReadinessReport["checks"] = { ...(await databaseChecks()) };
      if (opts.operators) {
        checks.operators = Object.fromEntries(
          Object.entries(opts.operators()).map(([operator, state]) => [
            operator,
            { ok: state === "bound" || state === "standby", state },
          ]),
        );
      }
      return report(checks);
    },
  };
}

async function checkDatabase(query: Promise<MigrationStatus | DatabaseError>): Promise<DatabaseChecks> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), DATABASE_TIMEOUT_MS);
  });
  const outcome = await Promise.race([query, timeout]);
  clearTimeout(timer);
  if (typeof outcome === "string") return { database: { ok: false, error: outcome } };
  return {
    database: { ok: true },
    // A database migrated further than this code (a newer release rolling out) is still ready.
    migrations: {
      ok: outcome.missing.length === 0,
      applied: outcome.applied,
      expected: outcome.expected,
      missing: outcome.missing,
    },
  };
}

/** The answer to GET /healthz or /readyz, for whichever server serves them. */
export interface HealthAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: object;
}

const started = performance.now();

export function healthzAnswer(): HealthAnswer {
  return {
    statusCode: 200,
    headers: { "Cache-Control": "no-store" },
    body: { status: "ok", uptime_seconds: Math.floor((performance.now() - started) / 1000) },
  };
}

/** How long a client is asked to wait before asking again when not ready. */
const NOT_READY_RETRY_AFTER_SECONDS = 2;

export async function readyzAnswer(check: () => Promise<ReadinessReport>): Promise<HealthAnswer> {
  const report = await check();
  const ready = report.status === "ready";
  return {
    statusCode: ready ? 200 : 503,
    headers: {
      "Cache-Control": "no-store",
      ...(ready ? {} : { "Retry-After": String(NOT_READY_RETRY_AFTER_SECONDS) }),
    },
    body: report,
  };
}
