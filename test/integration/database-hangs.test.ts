import { randomUUID } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../src/accounts/accounts.ts";
import { addSenderId } from "../../src/accounts/sender-ids.ts";
import { withTransaction } from "../../src/db/pool.ts";
import { createLogger } from "../../src/logger.ts";
import { type RunningService, startService } from "../../src/service.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { call, testConfig } from "../support/service.ts";

/**
 * A database that hangs rather than drops (a frozen host, a stalled path): the connection stays
 * open and nothing comes back, so the server's own timeouts never fire. A send on a connection
 * the API already holds must still answer 503 within the client's read limit
 * (PG_READ_TIMEOUT_MS), not hang for as long as the database does, and the API must serve again
 * once the database answers.
 */

/** A TCP proxy in front of Postgres that can hold every byte in both directions. */
class StallingProxy {
  private readonly server: Server;
  private readonly pairs = new Set<[Socket, Socket]>();
  private held = false;
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      client.pipe(upstream);
      upstream.pipe(client);
      if (this.held) this.pause(pair);
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.pairs.delete(pair);
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.port = typeof address === "object" && address ? address.port : 0;
  }

  private pause([client, upstream]: [Socket, Socket]): void {
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.pause();
  }

  hold(): void {
    this.held = true;
    for (const pair of this.pairs) this.pause(pair);
  }

  release(): void {
    this.held = false;
    for (const [client, upstream] of this.pairs) {
      client.pipe(upstream);
      upstream.pipe(client);
    }
  }

  async close(): Promise<void> {
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const READ_TIMEOUT_MS = 1_500;
const HANG_MS = 20_000;

let database: TestDatabase;
let proxy: StallingProxy;
let service: RunningService;
let base: string;
let headers: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  const target = new URL(database.url);
  proxy = new StallingProxy({ host: target.hostname, port: Number(target.port || 5432) });
  await proxy.listen();
  const proxied = new URL(database.url);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(proxy.port);
  const config = testConfig(proxied.toString(), {
    PG_STATEMENT_TIMEOUT_MS: "1000",
    PG_CONNECT_TIMEOUT_MS: "1000",
    PG_READ_TIMEOUT_MS: String(READ_TIMEOUT_MS),
  });
  service = await startService(config, createLogger("silent"), "api");
  base = `http://127.0.0.1:${service.port}`;
  const { account, key } = await withTransaction(service.pool, (tx) =>
    createAccount(tx, {
      name: `hang-${randomUUID().slice(0, 8)}`,
      currency: "USD",
      openingBalance: 1_000_000,
    }),
  );
  await withTransaction(service.pool, (tx) => addSenderId(tx, account.id, "SHIRI", "verified"));
  headers = { authorization: `Bearer ${key.token}`, "content-type": "application/json" };
}, 60_000);

afterAll(async () => {
  proxy?.release();
  await service?.stop();
  await proxy?.close();
  await database?.drop();
}, 60_000);

const send = (to: string) =>
  call(base, "POST", "/api/v1/sms", { headers, body: { to, from: "SHIRI", message: "hang" } });

describe("a database that hangs", () => {
  it("answers a send 503 within the read limit, and serves again once the database answers", async () => {
    // The API holds connections to the database already (the warm path a busy API is on).
    expect((await send("+263771000001")).status).toBe(202);

    proxy.hold();
    const started = Date.now();
    const hung = send("+263771000002");
    const released = setTimeout(() => proxy.release(), HANG_MS);
    try {
      const answer = await hung;
      const took = Date.now() - started;
      expect(answer.status, answer.text).toBe(503);
      expect(answer.headers.get("retry-after")).not.toBeNull();
      expect(took).toBeLessThan(HANG_MS / 2);
    } finally {
      clearTimeout(released);
      proxy.release();
    }

    const after = Date.now();
    let status = 0;
    while (status !== 202 && Date.now() - after < 15_000) status = (await send("+263771000003")).status;
    expect(status).toBe(202);
  }, 60_000);
});
