import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";

/**
 * The Postgres a bench runs on: DATABASE_URL's server when set, else an embedded one whose data
 * lives in bench/.data (never the checkout's own .data), on its own port. Each run gets a fresh
 * database, dropped at the end.
 */
export interface BenchDatabase {
  url: string;
  /** Where the server came from, for the report. */
  source: "DATABASE_URL" | "embedded";
  version: string;
  drop(): Promise<void>;
}

const BENCH_DATA_DIR = fileURLToPath(new URL("../.data/", import.meta.url));

function withDatabase(serverUrl: string, database: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminQuery(adminUrl: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function provisionBenchDatabase(): Promise<BenchDatabase> {
  const given = process.env.DATABASE_URL;
  let adminUrl: string;
  let stopServer = async () => {};
  if (given) {
    adminUrl = given;
  } else {
    // The embedded server runs as the OS user "postgres" when we are root: it must enter the folder.
    await mkdir(BENCH_DATA_DIR, { recursive: true, mode: 0o755 });
    const { DATABASE_URL: _ignored, ...env } = process.env;
    const config = loadConfig({
      ...env,
      DATA_DIR: BENCH_DATA_DIR,
      EMBEDDED_PG_PORT: process.env.BENCH_PG_PORT ?? "54339",
      LOG_LEVEL: "silent",
    });
    const handle = await openDatabase(config);
    adminUrl = withDatabase(handle.url, "postgres");
    stopServer = handle.stop;
  }
  const name = `shiri_bench_${randomBytes(5).toString("hex")}`;
  try {
    await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  } catch (err) {
    await stopServer();
    throw err;
  }
  const version = String((await adminQuery(adminUrl, "SHOW server_version")).rows[0]?.server_version);
  return {
    url: withDatabase(adminUrl, name),
    source: given ? "DATABASE_URL" : "embedded",
    version,
    async drop() {
      try {
        await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await stopServer();
      }
    },
  };
}
