import { randomUUID } from "node:crypto";
import { createAccount } from "../../src/accounts/accounts.ts";
import { addSenderId } from "../../src/accounts/sender-ids.ts";
import { loadConfig } from "../../src/config.ts";
import { withTransaction } from "../../src/db/pool.ts";
import { createLogger } from "../../src/logger.ts";
import { type Role, type RunningService, startService } from "../../src/service.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { expectDocumented } from "./openapi-responses.ts";

export interface TestService {
  base: string;
  service: RunningService;
  database: TestDatabase;
  /** An account with an approved sender id "SHIRI" and the given balance (ten-thousandths). */
  account(opts?: { balance?: number; senders?: string[] }): Promise<TestAccount>;
  /** A second API process on the same database, as when several run behind a balancer. */
  startAnother(role?: Role): Promise<{ base: string; stop(): Promise<void> }>;
  stop(): Promise<void>;
}

export interface TestAccount {
  id: string;
  key: string;
  keyId: string;
  headers: Record<string, string>;
}

/** The configuration a test's service runs with: loopback, ephemeral ports, quiet, no simulators. */
export function testConfig(url: string, env: Record<string, string>) {
  return loadConfig({
    ...process.env,
    DATABASE_URL: url,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    METRICS_PORT: "0",
    SHIRI_ENV: "test",
    START_SIMULATORS: "false",
    // Every test is one client address (loopback): the failed-authentication limit is the
    // security suite's to switch on (test/security/bogus-keys.test.ts).
    AUTH_FAILURES_PER_MINUTE: "0",
    ...env,
  });
}

/** The real service on a database of this file's own, listening on an ephemeral loopback port. */
export async function startTestService(
  env: Record<string, string> = {},
  role: Role = "api",
): Promise<TestService> {
  const database = await createTestDatabase();
  const config = testConfig(database.url, env);
  const logger = createLogger(config.LOG_LEVEL);
  const service = await startService(config, logger, role);
  const others: Array<() => Promise<void>> = [];
  return {
    base: `http://127.0.0.1:${service.port}`,
    service,
    database,
    async account(opts = {}) {
      const { account, key } = await withTransaction(service.pool, (tx) =>
        createAccount(tx, {
          name: `acct-${randomUUID().slice(0, 8)}`,
          currency: "USD",
          openingBalance: opts.balance ?? 1_000_000,
        }),
      );
      for (const sender of opts.senders ?? ["SHIRI"]) {
        await withTransaction(service.pool, (tx) => addSenderId(tx, account.id, sender, "verified"));
      }
      return {
        id: account.id,
        key: key.token,
        keyId: key.id,
        headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json" },
      };
    },
    async startAnother(anotherRole = "api") {
      const other = await startService(config, logger, anotherRole);
      others.push(other.stop);
      return { base: `http://127.0.0.1:${other.port}`, stop: other.stop };
    },
    async stop() {
      for (const stop of others) await stop();
      await service.stop();
      await database.drop();
    },
  };
}

/**
 * fetch + JSON, returning the status, the parsed body (or the raw text when it is not JSON) and
 * the text itself. Every answer is held to the OpenAPI document (openapi-responses.ts): one the
 * document does not describe fails the test that received it. A test that probes outside the
 * document on purpose (a path that is no endpoint) says why in `outsideDocument`.
 */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: {
    headers?: Record<string, string>;
    body?: unknown;
    rawBody?: string | Uint8Array<ArrayBuffer>;
    signal?: AbortSignal;
    outsideDocument?: string;
  } = {},
): Promise<{ status: number; body: unknown; text: string; headers: Headers }> {
  const init: RequestInit = { method, headers: opts.headers ?? {} };
  if (opts.rawBody !== undefined) init.body = opts.rawBody;
  else if (opts.body !== undefined) init.body = JSON.stringify(opts.body);
  if (opts.signal) init.signal = opts.signal;
  const res = await fetch(base + path, init);
  const text = await res.text();
  if (opts.outsideDocument === undefined)
    expectDocumented({ method, url: path, status: res.status, headers: res.headers, text });
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, text, headers: res.headers };
}
