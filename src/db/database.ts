import path from "node:path";
import type { Config } from "../config.ts";
import { startEmbeddedPostgres } from "./embedded.ts";

export interface DatabaseHandle {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/** DATABASE_URL when given; else this checkout's embedded Postgres, started if nobody runs it. */
export async function openDatabase(config: Config, onLog?: (line: string) => void): Promise<DatabaseHandle> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, embedded: false, stop: async () => {} };
  const db = await startEmbeddedPostgres({
    dataDir: path.join(config.DATA_DIR, "pg"),
    port: config.EMBEDDED_PG_PORT,
    database: "shiri",
    ...(onLog ? { onLog } : {}),
  });
  return { url: db.url, embedded: true, stop: db.stop };
}
