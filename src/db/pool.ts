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

/** Runs fn in one transaction: commits on success, rolls back on any throw. */
export async function withTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Postgres SQLSTATE of a driver error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err && typeof err.code === "string"
    ? err.code
    : undefined;
}
