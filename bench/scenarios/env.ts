import { OPERATORS } from "../../carriers/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { setUpAccount, smppEnv, startBenchSimulators, waitForBinds } from "../dispatch-lib/harness.ts";
import type { Cleanup } from "../lib/cleanup.ts";
import { type BenchDatabase, provisionBenchDatabase } from "../lib/postgres.ts";
import { benchRateLimits } from "../lib/rate-limits.ts";
import {
  type ShiriProcess as ApiProcess,
  migrationsUnderTest,
  startShiriProcess,
} from "../lib/shiri-process.ts";
import type { HttpEnv } from "./types.ts";

export interface StartedEnv extends HttpEnv {
  db: BenchDatabase;
  api: ApiProcess;
  accountId: string;
}

/**
 * A fresh database (DATABASE_URL's server, else the embedded one under bench/.data), migrated,
 * with an account, and the API in a child process (`shiri start --role api`) so autocannon never
 * shares its event loop. Everything it starts is registered with `cleanup`.
 */
export async function startEnv(
  cleanup: Cleanup,
  apiEnv: Record<string, string> = {},
  apiNodeFlags: string[] = [],
): Promise<StartedEnv> {
  const db = await provisionBenchDatabase();
  cleanup.add(db.drop);
  // The bench's own connections are told apart from the service's in pg_stat_activity (the
  // connection string's application_name wins over the one createPool sets).
  const own = new URL(db.url);
  own.searchParams.set("application_name", "shiri-bench");
  const pool: Pool = createPool(own.toString(), 3);
  cleanup.add(() => pool.end());
  await migrate(pool, { directory: migrationsUnderTest() });
  const account = await setUpAccount(pool);
  const api = await startShiriProcess({
    role: "api",
    databaseUrl: db.url,
    env: { ...benchRateLimits(), ...apiEnv },
    nodeFlags: apiNodeFlags,
  });
  cleanup.add(api.stop);
  return { db, pool, api, base: api.base, key: account.key, accountId: account.accountId };
}

/**
 * startEnv, the carrier simulators (every operator) and one worker process pointed at them, bound
 * and ready: what the end-to-end scenarios run on. Everything is registered with `cleanup`.
 */
export async function startEnvWithWorker(cleanup: Cleanup): Promise<StartedEnv & { worker: ApiProcess }> {
  const env = await startEnv(cleanup);
  const sims = await startBenchSimulators({});
  cleanup.add(() => sims.stop());
  const worker = await startShiriProcess({
    role: "worker",
    databaseUrl: env.db.url,
    env: smppEnv(sims.ports),
  });
  cleanup.add(worker.stop);
  await waitForBinds(sims, OPERATORS, 30_000);
  return { ...env, worker };
}
