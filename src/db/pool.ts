import pg from "pg";
import type { Config } from "../config.ts";

/** Anything that runs a query: the pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;
export type Tx = pg.PoolClient;
export type Pool = pg.Pool;

// bigint (int8) columns hold money; they stay exact as JS numbers up to 2^53, far beyond any balance.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

/**
 * Limits every connection carries, so a hung or locked database fails a request in seconds
 * instead of holding it (and the connection, and whatever lease its caller holds) forever.
 */
export interface DatabaseTimeouts {
  /** Longest a single statement may run (statement_timeout). */
  statementMs: number;
  /** Longest a statement may wait for a lock, advisory locks included (lock_timeout). */
  lockMs: number;
  /** Longest a transaction may sit open with nothing running (idle_in_transaction_session_timeout). */
  idleInTransactionMs: number;
  /** Longest a checkout may wait for a connection, new or from the pool. */
  connectMs: number;
  /**
   * Longest the client waits for the answer to a statement before it gives the connection up: a
   * database that hangs (a frozen host, a stalled network path) never got the statement, so the
   * server's timeouts above never fire. Absent: no limit, for connections that lift those
   * timeouts (migrations, vacuum, the audit, the CLI).
   */
  readMs?: number;
}

/** How long past its statement timeout a statement's answer may take before the client gives up. */
const READ_MARGIN_MS = 5_000;

/** The timeouts the service's connections carry, from its configuration. */
export function databaseTimeouts(
  config: Pick<
    Config,
    | "PG_STATEMENT_TIMEOUT_MS"
    | "PG_LOCK_TIMEOUT_MS"
    | "PG_IDLE_IN_TRANSACTION_TIMEOUT_MS"
    | "PG_CONNECT_TIMEOUT_MS"
    | "PG_READ_TIMEOUT_MS"
  >,
): Required<DatabaseTimeouts> {
  return {
    statementMs: config.PG_STATEMENT_TIMEOUT_MS,
    lockMs: config.PG_LOCK_TIMEOUT_MS,
    idleInTransactionMs: config.PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    connectMs: config.PG_CONNECT_TIMEOUT_MS,
    readMs: config.PG_READ_TIMEOUT_MS ?? config.PG_STATEMENT_TIMEOUT_MS + READ_MARGIN_MS,
  };
}

/** The same without the client's read limit: for connections that run statements without bound. */
export function unboundedReads({ readMs: _unbounded, ...timeouts }: DatabaseTimeouts): DatabaseTimeouts {
  return timeouts;
}

/**
 * A client with an 'error' listener for its whole life. pg-pool listens only while a client is
 * idle, and a client emits 'error' by itself whenever its backend goes (a restart's fast
 * shutdown, pg_terminate_backend): with nobody listening at that moment, the process ends. The
 * event loses nothing: the client's pending queries reject with the error, and whoever holds the
 * client releases it broken. The queue's pool is given it too (connectionOptions).
 */
class GuardedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on("error", () => {});
  }
}

/** The timeouts as node-postgres connection options (sent at connection start, so every session has them). */
export function connectionOptions(timeouts: DatabaseTimeouts) {
  return {
    Client: GuardedClient,
    statement_timeout: timeouts.statementMs,
    lock_timeout: timeouts.lockMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    connectionTimeoutMillis: timeouts.connectMs,
    ...(timeouts.readMs === undefined ? {} : { query_timeout: timeouts.readMs }),
    // A peer that vanished without a FIN (network cut, host down) is noticed, not waited on.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/**
 * The service's pool. `idleMs`: a connection beyond the first `keep` is closed once it has been idle
 * this long, so an idle process holds `keep` (pg's default, 10 s, kept every connection that
 * periodic duties touched now and then; docs/decisions/0011-idle-worker.md).
 */
export function createPool(
  connectionString: string,
  max: number,
  timeouts?: DatabaseTimeouts,
  idleMs?: number,
  keep = 1,
): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    ...(idleMs === undefined ? {} : { min: keep, idleTimeoutMillis: idleMs }),
    application_name: "shiri",
    Client: GuardedClient,
    ...(timeouts ? connectionOptions(timeouts) : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  return pool;
}

/** Where readiness asks the database: chosen at each check (readinessDatabase). */
export interface ReadinessDatabase {
  pick(): Queryable;
  end(): Promise<void>;
}

/**
 * Where readiness asks the database: the pool while it has a connection to spare, so that an
 * idle process holds no backend more. When requests hold every pooled connection, the question
 * would wait in the pool's queue behind them and time out although the database answers at once
 * (a load balancer would then take every replica out at peak load): it is asked instead on a
 * connection of readiness's own, one at most, closed once `idleMs` unused. Only a database that
 * does not answer, or a pool that cannot connect, makes the process not ready.
 */
export function readinessDatabase(
  pool: pg.Pool,
  connectionString: string,
  timeouts: DatabaseTimeouts,
  idleMs: number,
): ReadinessDatabase {
  const own = new pg.Pool({
    connectionString,
    max: 1,
    min: 0,
    idleTimeoutMillis: idleMs,
    application_name: "shiri-readiness",
    ...connectionOptions(timeouts),
  });
  own.on("error", () => {});
  const spare = () =>
    pool.waitingCount === 0 && (pool.idleCount > 0 || pool.totalCount < (pool.options.max ?? 1));
  return {
    pick: () => (spare() ? pool : own),
    end: () => own.end(),
  };
}

/** Runs a function in one transaction, the way withTransaction does (a caller may add to it). */
export type Transact = <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;

/** Transactions that `commitWith` already ended, so withTransaction does not end them again. */
const ended = new WeakSet<pg.PoolClient>();

/**
 * Runs fn in one transaction: commits on success, rolls back on any throw. BEGIN is not awaited
 * before fn runs: pg queues fn's first statement behind it and sends it the moment BEGIN is
 * answered, with no turn of the event loop between (the connection does not pipeline:
 * docs/decisions/0033-connections-do-not-pipeline.md).
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  ended.delete(client);
  // pg-pool listens for 'error' on idle clients only. A backend that dies while this one is
  // checked out emits 'error' on the client, and with no listener that ends the process. Its
  // pending queries reject on their own; keep the reason so the client is discarded, not reused.
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken ??= err;
  };
  client.on("error", onError);
  try {
    const begin = client.query("BEGIN");
    // fn may throw before BEGIN is awaited below: its rejection must never go unobserved.
    begin.catch(() => {});
    const result = await fn(client);
    await begin;
    if (!ended.has(client)) await client.query("COMMIT");
    return result;
  } catch (err) {
    // A statement that got no answer in time holds the connection: a ROLLBACK would wait behind
    // it. The connection is given up instead, and the server rolls back when it sees it go.
    if (isReadTimeout(err)) broken ??= err;
    if (!ended.has(client) && !broken)
      await client.query("ROLLBACK").catch((rollbackErr: Error) => {
        broken ??= rollbackErr;
      });
    throw err;
  } finally {
    ended.delete(client);
    client.removeListener("error", onError);
    client.release(broken);
  }
}

/** Tries of a transaction that Postgres ended to break a deadlock (40P01), the first included. */
const DEADLOCK_TRIES = 3;

/**
 * withTransaction, tried again when Postgres ended it to break a deadlock: for a transaction that
 * locks many rows others lock in another order (a bulk cancel and a worker's claim), so that the
 * race ends in its answer, not a 503. Whatever it did was rolled back, so it is safe to repeat.
 */
export async function withTransactionPastDeadlocks<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withTransaction(pool, fn);
    } catch (err) {
      if (sqlState(err) !== "40P01" || attempt >= DEADLOCK_TRIES) throw err;
    }
  }
}

/**
 * Queues COMMIT behind the transaction's last statement: pg sends it the moment the statement is
 * answered, so whatever row locks the statement takes are held for its round trip and the
 * COMMIT's, not for however long the event loop is busy in between. If the statement fails the
 * transaction is aborted, Postgres answers the COMMIT with a rollback, and the statement's error
 * is thrown.
 */
export async function commitWith<R extends pg.QueryResultRow>(
  tx: Tx,
  statement: pg.QueryConfig,
): Promise<pg.QueryResult<R>> {
  const last = tx.query<R>(statement);
  const commit = tx.query("COMMIT");
  ended.add(tx);
  const [lastResult, commitResult] = await Promise.allSettled([last, commit]);
  if (lastResult.status === "rejected") throw lastResult.reason;
  if (commitResult.status === "rejected") throw commitResult.reason;
  return lastResult.value;
}

/** Postgres SQLSTATE of a driver error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err && typeof err.code === "string"
    ? err.code
    : undefined;
}

/**
 * SQLSTATEs that mean the database is out of reach: the connection was lost or refused, the server
 * is shutting down or starting, out of connections or resources.
 */
const OUT_OF_REACH_STATES = new Set([
  "57P01", // admin_shutdown (pg_terminate_backend, fast shutdown)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, recovering)
  "53300", // too_many_connections
  "53100", // disk_full
  "53200", // out_of_memory
]);
/**
 * SQLSTATEs of contention: one of the timeouts above (or a deadlock or serialisation failure) ended
 * the statement. Try again, as when out of reach, but the database is there.
 */
const CONTENDED_STATES = new Set([
  "57014", // query_canceled: statement_timeout
  "55P03", // lock_not_available: lock_timeout
  "25P03", // idle_in_transaction_session_timeout
  "40001", // serialization_failure
  "40P01", // deadlock_detected
]);
const UNAVAILABLE_SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
// node-postgres and pg-pool say these in words only; the last is a database closed to
// connections (ALLOW_CONNECTIONS false), whose SQLSTATE 55000 is too general to go by.
const UNAVAILABLE_MESSAGES =
  /connection terminated|not queryable|timeout exceeded when trying to connect|connection timeout|query read timeout|is not currently accepting connections/i;

/** node-postgres's own error when a statement's answer did not come within its read limit, or one it caused. */
function isReadTimeout(err: unknown, depth = 0): err is Error {
  if (!(err instanceof Error) || depth > 3) return false;
  return err.message === "Query read timeout" || isReadTimeout(err.cause, depth + 1);
}

/** True when err (or what caused it) says the database is unreachable or overloaded, not that the request was wrong. */
export function isDatabaseUnavailable(err: unknown): boolean {
  return unavailable(err, true, 0);
}

/**
 * True when err (or what caused it) says the database is out of reach; false for contention (a
 * lock or statement timeout, a deadlock), which one statement meets while the database serves the
 * rest: what the outage log (src/logger.ts) counts instead of logging.
 */
export function isDatabaseOutOfReach(err: unknown): boolean {
  return unavailable(err, false, 0);
}

function unavailable(err: unknown, contention: boolean, depth: number): boolean {
  if (typeof err !== "object" || err === null || depth > 3) return false;
  const code = sqlState(err);
  if (code && contention && CONTENDED_STATES.has(code)) return true;
  if (code && (OUT_OF_REACH_STATES.has(code) || code.startsWith("08") || UNAVAILABLE_SOCKET_CODES.has(code)))
    return true;
  if (err instanceof Error && UNAVAILABLE_MESSAGES.test(err.message)) return true;
  if (err instanceof AggregateError && err.errors.some((e) => unavailable(e, contention, depth + 1)))
    return true;
  return "cause" in err && unavailable(err.cause, contention, depth + 1);
}
