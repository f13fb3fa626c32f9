import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../../../bench/lib/shiri-process.ts";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "../../../src/db/embedded.ts";
import { migrate } from "../../../src/db/migrate.ts";
import { createPool } from "../../../src/db/pool.ts";
import { createLogger } from "../../../src/logger.ts";
import { startQueue } from "../../../src/queue/boss.ts";
import type { TestDatabase } from "../../support/database.ts";

/**
 * A Postgres server of the scenario's own (the embedded one, on a free port, its data in a
 * temporary folder) that the scenario may stop and start again. The shared test server is never
 * touched: others' tests run on it.
 */
export interface OwnPostgres extends TestDatabase {
  /** Fast shutdown (open sessions rolled back), `downMs` with nothing listening, then up again. */
  restart(downMs: number): Promise<void>;
}

const DATABASE = "shiri";

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = await mkdtemp(path.join(tmpdir(), "shiri-faults-pg-"));
  // As root the server runs as the OS user "postgres", which must be able to enter the folder.
  await chmod(dir, 0o755);
  const port = await freePort();
  const start = () => startEmbeddedPostgres({ dataDir: path.join(dir, "pg"), port, database: DATABASE });
  let server: EmbeddedDatabase;
  try {
    server = await start();
    if (!server.startedHere) throw new Error(`a Postgres was already running in ${dir}`);
    const pool = createPool(server.url, 2);
    await migrate(pool);
    await pool.end();
    // pg-boss creates its schema on its first start, as for the test template.
    const boss = await startQueue(server.url, createLogger("silent"), { max: 2 });
    await boss.stop({ graceful: false });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: server.url,
    async restart(downMs) {
      await server.stop();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      server = await start();
    },
    async drop() {
      await server.stop();
      await rm(server.dataDir, { recursive: true, force: true });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
