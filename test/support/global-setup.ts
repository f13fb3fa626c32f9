import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { EmbeddedPostgresError, startEmbeddedPostgres } from "../../src/db/embedded.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createPool } from "../../src/db/pool.ts";
import { createLogger } from "../../src/logger.ts";
import { startQueue } from "../../src/queue/boss.ts";

/**
 * One Postgres for the whole run — DATABASE_URL, else a testcontainer when a Docker engine
 * answers, else embedded — and one migrated template database that each test file clones.
 */
declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

async function dockerAnswers(): Promise<boolean> {
  if (!process.env.DOCKER_HOST && !existsSync("/var/run/docker.sock")) return false;
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

async function provisionServer(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} };
  if (await dockerAnswers()) {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
    const container = await new PostgreSqlContainer("postgres:16-alpine").start();
    return { url: container.getConnectionUri(), stop: async () => void (await container.stop()) };
  }
  const dir = await mkdtemp(path.join(tmpdir(), "shiri-test-pg-"));
  // As root the server runs as the OS user "postgres": opened up, the folder stays its home
  // (else the data would move to a folder of its own, removed below all the same).
  await chmod(dir, 0o755);
  const port = await freePort();
  const db = await startEmbeddedPostgres({ dataDir: path.join(dir, "pg"), port, database: "postgres" }).catch(
    async (err: unknown) => {
      await rm(dir, { recursive: true, force: true });
      throw err;
    },
  );
  return {
    url: db.url,
    stop: async () => {
      await db.stop();
      await rm(db.dataDir, { recursive: true, force: true });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A loopback port nobody listens on now (a random pick from a range collides on a busy machine). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export function databaseUrl(serverUrl: string, database: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await provisionServer().catch((err: unknown) => {
    // Why, in one line, rather than a stack trace: the message says what to do.
    if (!(err instanceof EmbeddedPostgresError)) throw err;
    process.stderr.write(`\nshiri tests: ${err.message}\n\n`);
    process.exit(1);
  });
  const template = `shiri_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  await admin.query(`CREATE DATABASE ${template}`);
  const templateUrl = databaseUrl(server.url, template);
  const pool = createPool(templateUrl, 2);
  await migrate(pool);
  await pool.end();
  // pg-boss creates its schema on first start; doing it once here makes every clone ready.
  const boss = await startQueue(templateUrl, createLogger("silent"), { max: 2 });
  await boss.stop({ graceful: false });

  project.provide("adminDatabaseUrl", server.url);
  project.provide("templateDatabase", template);
  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => {});
    await admin.end();
    await server.stop();
  };
}
