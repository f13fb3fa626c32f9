import path from "node:path";
import { type Config, ConfigError, EMBEDDED_IN_PRODUCTION } from "../config.ts";
import { startEmbeddedPostgres } from "./embedded.ts";
import { isDatabaseOutOfReach } from "./pool.ts";

export interface DatabaseHandle {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when given; else, outside production, this checkout's embedded Postgres, started if
 * nobody runs it.
 */
export async function openDatabase(config: Config, onLog?: (line: string) => void): Promise<DatabaseHandle> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, embedded: false, stop: async () => {} };
  if (config.SHIRI_ENV === "production") throw new ConfigError(EMBEDDED_IN_PRODUCTION);
  const db = await startEmbeddedPostgres({
    dataDir: path.join(config.DATA_DIR, "pg"),
    port: config.EMBEDDED_PG_PORT,
    database: "shiri",
    ...(onLog ? { onLog } : {}),
  });
  return { url: db.url, embedded: true, stop: db.stop };
}

/**
 * A failure to reach DATABASE_URL's server, said as such: the driver's own words
 * ("connect ECONNREFUSED 10.0.0.5:5432") do not say which setting to look at. The address is
 * named without its credentials. Anything else is returned as it is.
 */
export function namingTheDatabase(err: unknown, database: DatabaseHandle): unknown {
  if (database.embedded || !isDatabaseOutOfReach(err)) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return new Error(`DATABASE_URL (${whereIs(database.url)}) cannot be reached: ${reason}`, { cause: err });
}

/** host:port/database of a Postgres URL, never its user or password. */
function whereIs(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.searchParams.get("host") ?? parsed.hostname;
    return `${host}:${parsed.port || "5432"}${parsed.pathname}`;
  } catch {
    return "an address that is not a URL";
  }
}
