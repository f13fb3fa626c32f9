import path from "node:path";
import { type Config, ConfigError, EMBEDDED_IN_PRODUCTION } from "../config.ts";
import { startEmbeddedPostgres } from "./embedded.ts";

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
