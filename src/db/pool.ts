import pg from "pg";

/** Anything that runs a query: the pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;
export type Tx = pg.PoolClient;
export type Pool = pg.Pool;

// bigint (int8) columns hold money; they stay exact as JS numbers up to 2^53, far beyond any balance.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export function createPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, application_name: "shiri" });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  return pool;
}

/** Transactions that `commitWith` already ended, so withTransaction does not end them again. */
const ended = new WeakSet<pg.PoolClient>();

/**
 * Runs fn in one transaction: commits on success, rolls back on any throw. BEGIN travels with
 * fn's first statement (pg queues it on the connection), saving a round trip.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  ended.delete(client);
  try {
    const begin = client.query("BEGIN");
    const result = await fn(client);
    await begin;
    if (!ended.has(client)) await client.query("COMMIT");
    return result;
  } catch (err) {
    if (!ended.has(client)) await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    ended.delete(client);
    client.release();
  }
}

/**
 * Sends the transaction's last statement and COMMIT back to back, so whatever row locks that
 * statement takes are held for one round trip, not two plus however long the event loop is
 * busy in between. If the statement fails the transaction is aborted, Postgres answers the
 * COMMIT with a rollback, and the statement's error is thrown.
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
