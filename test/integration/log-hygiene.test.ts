import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulators, startSimulators } from "../../carriers/simulator/index.ts";
import { createAccount } from "../../src/accounts/accounts.ts";
import { addSenderId } from "../../src/accounts/sender-ids.ts";
import { loadConfig } from "../../src/config.ts";
import { withTransaction } from "../../src/db/pool.ts";
import { createLogger, numberForLog, receiptForLog } from "../../src/logger.ts";
import { type RunningService, startService } from "../../src/service.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { smppEnv } from "../support/dispatch.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * No phone numbers and no message text in the logs at info level: the whole service (API,
 * dispatch, receipts) runs with an info logger whose lines the test reads, through accepted,
 * refused, undelivered, unroutable and rejected sends.
 */

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    done();
  },
});

const TEXT = "Zvakavanzika-4417 message text";
const DELIVERED = "+263771230417";
const REFUSED = "+263779990417";
const UNDELIVERED = "+263731230417";
const UNROUTABLE = "+15550100417";
/** What must never appear: each number's subscriber digits, and the text. */
const SECRETS = ["1230417", "9990417", "0100417", "Zvakavanzika"];

let db: TestDatabase;
let sims: RunningSimulators;
let service: RunningService;
let base: string;
let headers: Record<string, string>;

beforeAll(async () => {
  db = await createTestDatabase();
  sims = await startSimulators({
    host: "127.0.0.1",
    perOperator: {
      econet: { port: 0, behaviour: { rejectDestinations: [REFUSED.slice(1)] } },
      netone: { port: 0 },
      telecel: { port: 0, behaviour: { outcomes: { UNDELIV: 1 } } },
    },
  });
  const config = loadConfig({
    ...process.env,
    ...smppEnv(sims.ports),
    DATABASE_URL: db.url,
    HOST: "127.0.0.1",
    PORT: "0",
    METRICS_PORT: "0",
    SHIRI_ENV: "test",
    LOG_LEVEL: "info",
  });
  service = await startService(config, createLogger("info", { destination: sink }), "all");
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
  headers = { authorization: `Bearer ${key.token}`, "content-type": "application/json" };
});

afterAll(async () => {
  await service?.stop();
  await sims?.stop();
  await db?.drop();
});

async function post(path: string, body: string): Promise<{ status: number; body: unknown }> {
  const res = await call(base, "POST", path, { headers, rawBody: body });
  return { status: res.status, body: res.body };
}

describe("log hygiene", () => {
  it("no number or message text is logged through a message's whole life", async () => {
    const ids: string[] = [];
    for (const to of [DELIVERED, REFUSED, UNROUTABLE]) {
      const res = await post("/api/v1/sms", JSON.stringify({ to, from: "SHIRI", message: TEXT }));
      expect(res.status).toBe(202);
      ids.push((res.body as { id: string }).id);
    }
    const bulk = await post(
      "/api/v1/sms/bulk",
      JSON.stringify({ to: [UNDELIVERED, DELIVERED], from: "SHIRI", message: TEXT }),
    );
    expect(bulk.status).toBe(202);
    ids.push(...(bulk.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id));
    // Refused before any write: a bad field, and JSON that does not parse.
    expect(
      (await post("/api/v1/sms", JSON.stringify({ to: DELIVERED, from: "NOPE", message: TEXT }))).status,
    ).toBe(400);
    expect((await post("/api/v1/sms", `{"to":"${DELIVERED}","message":"${TEXT}"`)).status).toBe(400);

    await waitFor(
      async () => {
        const { rows } = await service.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM messages
            WHERE id = ANY($1) AND (status = 'failed' OR (status = 'success' AND operator_response <> 'ESME_ROK'))`,
          [ids],
        );
        return rows[0]?.n === ids.length;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: "every message to reach its end" },
    );

    expect(lines.length).toBeGreaterThan(ids.length);
    expect(lines.some((l) => l.includes('"url":"/api/v1/sms"'))).toBe(true);
    const leaks = lines.filter((l) => SECRETS.some((s) => l.includes(s)));
    expect(leaks).toEqual([]);
  });

  it("one access line per request, with its id, and the id echoed in X-Request-Id", async () => {
    const traced = await call(base, "GET", "/api/v1/balance", {
      headers: { ...headers, "x-request-id": "trace-4417" },
    });
    expect(traced.status).toBe(200);
    expect(traced.headers.get("x-request-id")).toBe("trace-4417");
    const made = await call(base, "GET", "/api/v1/balance", {
      headers: { ...headers, "x-request-id": "not a token!" },
    });
    const id = made.headers.get("x-request-id") ?? "";
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(async () => lines.some((l) => l.includes(id)), { what: "the second access line" });
    const access = lines
      .map((l) => JSON.parse(l) as { msg: string; req?: { id: string } })
      .filter((l) => l.msg === "request completed" && (l.req?.id === "trace-4417" || l.req?.id === id));
    expect(access).toHaveLength(2);
    expect(access[0]).toMatchObject({
      req: { id: "trace-4417", method: "GET", url: "/api/v1/balance" },
      res: { statusCode: 200 },
      account_id: expect.any(String),
      responseTime: expect.any(Number),
    });
    expect(lines.some((l) => l.includes(headers.authorization?.slice(7) ?? "no key"))).toBe(false);
  });

  it("a warning about a submit names the message and the part it belongs to, not the number", async () => {
    sims.get("econet").setBehaviour({ genericNackRate: 1 });
    try {
      const res = await post(
        "/api/v1/sms",
        JSON.stringify({ to: "+263771230418", from: "SHIRI", message: TEXT }),
      );
      expect(res.status).toBe(202);
      const id = (res.body as { id: string }).id;
      await waitFor(async () => lines.some((l) => l.includes("generic_nack") && l.includes(id)), {
        what: "the generic_nack warning naming the message",
      });
      const warning = JSON.parse(lines.find((l) => l.includes("generic_nack") && l.includes(id)) ?? "{}");
      expect(warning).toMatchObject({ ref: `${id} part 1`, link: "econet" });
      expect(JSON.stringify(warning)).not.toContain("1230418");
    } finally {
      sims.get("econet").setBehaviour({ genericNackRate: 0 });
    }
  });

  it("a Postgres error's detail (which can quote a row) is redacted", () => {
    const err = Object.assign(new Error("new row violates check constraint"), {
      code: "23514",
      detail: `Failing row contains (${DELIVERED}, ${TEXT}).`,
    });
    createLogger("info", { destination: sink }).error({ err }, "insert failed");
    const line = lines.at(-1) ?? "";
    expect(line).toContain("23514");
    expect(SECRETS.filter((s) => line.includes(s))).toEqual([]);
  });

  it("numbers are cut to their prefix and receipt texts at text:", () => {
    expect(numberForLog("+263771230417")).toBe("+26377…(13)");
    expect(numberForLog("263771230417")).toBe("263771…(12)");
    expect(numberForLog("123")).toBe("…");
    expect(
      receiptForLog(
        "id:1234 sub:001 dlvrd:001 submit date:2601011200 done date:2601011201 stat:DELIVRD err:000 text:Hello there",
      ),
    ).toBe(
      "id:1234 sub:001 dlvrd:001 submit date:2601011200 done date:2601011201 stat:DELIVRD err:000 text:…",
    );
    expect(receiptForLog("Hello there, not a receipt")).not.toContain("Hello");
  });
});
