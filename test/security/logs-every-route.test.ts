/**
 * No personal data in the logs, on any route: every endpoint of the API (the OpenAPI document's
 * list, so a new one is driven too) is called with numbers and a text in its path, its query and
 * its body, with a valid key, a bogus one and none, and with a body that does not parse. The
 * service logs at info level into lines the test reads; none may hold a number's subscriber
 * digits, the text, or the key.
 */
import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../src/accounts/accounts.ts";
import { addSenderId } from "../../src/accounts/sender-ids.ts";
import { loadConfig } from "../../src/config.ts";
import { withTransaction } from "../../src/db/pool.ts";
import { ENDPOINTS } from "../../src/intake/openapi/endpoints.ts";
import { createLogger, urlForLog } from "../../src/logger.ts";
import { type RunningService, startService } from "../../src/service.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    done();
  },
});

const NUMBER = "+263771984417";
const LOCAL = "0771984417";
const TEXT = "Chakavanzika-5521 private text";
/** What must never appear: the subscriber digits, the text. The key is added once made. */
const SECRETS = ["1984417", "Chakavanzika"];

let db: TestDatabase;
let service: RunningService;
let base: string;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: db.url,
    HOST: "127.0.0.1",
    PORT: "0",
    METRICS_PORT: "0",
    SHIRI_ENV: "test",
    START_SIMULATORS: "false",
    LOG_LEVEL: "info",
  });
  service = await startService(config, createLogger("info", { destination: sink }), "api");
  base = `http://127.0.0.1:${service.port}`;
  const { key } = await withTransaction(service.pool, async (tx) => {
    const created = await createAccount(tx, {
      name: `logs-${randomUUID().slice(0, 8)}`,
      currency: "USD",
      openingBalance: 100_000_000,
    });
    await addSenderId(tx, created.account.id, "SHIRI", "verified");
    return created;
  });
  token = key.token;
});

afterAll(async () => {
  await service?.stop();
  await db?.drop();
});

/** A value for a path parameter: an id where the route wants one, else the number. */
const pathValue = (name: string) => (/id$/i.test(name) ? randomUUID() : NUMBER);

/** Every query parameter the endpoint declares, and the usual search words, with the secrets in them. */
function queryOf(names: readonly string[]): string {
  const params = new URLSearchParams();
  for (const name of new Set([...names, "to", "from", "q", "number"]))
    params.set(name, name === "from" ? TEXT : NUMBER);
  params.set("local", LOCAL);
  return params.toString();
}

const BODY = JSON.stringify({
  to: NUMBER,
  from: "SHIRI",
  message: TEXT,
  number: NUMBER,
  name: TEXT,
  url: `https://example.invalid/${LOCAL}`,
  messages: [{ to: NUMBER, message: TEXT }],
});

describe("no personal data in the logs, on any route", () => {
  it("drives every endpoint with numbers and a text in path, query and body, and finds none logged", async () => {
    SECRETS.push(token);
    let requests = 0;
    for (const endpoint of ENDPOINTS) {
      const path = endpoint.path.replace(/\{(\w+)\}/g, (_, name: string) =>
        encodeURIComponent(pathValue(name)),
      );
      const queryNames = Object.keys(endpoint.request?.query?.shape ?? {});
      const url = `${base}${path}?${queryOf(queryNames)}`;
      const method = endpoint.method.toUpperCase();
      const withBody = method !== "GET" && method !== "DELETE";
      for (const authorization of [`Bearer ${token}`, `Bearer shr_${"x".repeat(43)}`, undefined])
        for (const body of withBody ? [BODY, `{"to":"${NUMBER}","message":"${TEXT}"`] : [undefined]) {
          const res = await fetch(url, {
            method,
            headers: {
              ...(authorization ? { authorization } : {}),
              ...(body ? { "content-type": "application/json" } : {}),
            },
            ...(body ? { body } : {}),
          });
          await res.arrayBuffer();
          expect(res.status, `${method} ${endpoint.path}`).toBeLessThan(500);
          requests++;
        }
    }
    // A key pasted into the path by mistake (a 404, or a 400 for a bad id) is not logged either.
    for (const path of [`/api/v1/${token}`, `/api/v1/sms/${token}`]) {
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      await res.arrayBuffer();
      requests++;
    }
    // Every request but the health probes' (answered before logging, so probes make no noise) has
    // its access line, written on finish: the last ones get a moment.
    const probes = ENDPOINTS.filter((e) => e.path === "/healthz" || e.path === "/readyz").length * 3;
    await new Promise((r) => setTimeout(r, 200));
    const access = lines.filter((l) => l.includes('"request completed"'));
    expect(access.length).toBeGreaterThanOrEqual(requests - probes);
    const leaks = lines.filter((l) => SECRETS.some((s) => l.includes(s)));
    expect(leaks).toEqual([]);
  });

  it("keeps what an operator needs in the access line: the route, the query's names, no values", () => {
    expect(urlForLog(`/api/v1/sms?to=${encodeURIComponent(NUMBER)}&status=failed`)).toBe(
      "/api/v1/sms?to=…&status=…",
    );
    expect(urlForLog("/api/v1/opt-outs/263771984417")).toBe("/api/v1/opt-outs/…(12)");
    const id = randomUUID();
    expect(urlForLog(`/api/v1/sms/${id}`)).toBe(`/api/v1/sms/${id}`);
    expect(urlForLog("/api/v1/balance")).toBe("/api/v1/balance");
    expect(urlForLog(`/api/v1/shr_${"a".repeat(43)}`)).toBe("/api/v1/…(47)");
  });
});
