import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ShiriProcess, startShiriProcesses } from "../../bench/lib/shiri-process.ts";
import { createAccount } from "../../src/accounts/accounts.ts";
import { addSenderId } from "../../src/accounts/sender-ids.ts";
import { createPool, type Pool, withTransaction } from "../../src/db/pool.ts";
import { shiri as cli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { call } from "../support/service.ts";

/**
 * The limits hold across API processes: two real `shiri start --role api` processes on one
 * database, each with its own pool and its own limiter, share every bucket. The account's limits
 * are set with the CLI (`shiri rate-limit set`), run for real, while both processes serve.
 */
let db: TestDatabase;
let pool: Pool;
let apis: ShiriProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 2);
  apis = await startShiriProcesses(
    [0, 1].map(() => ({
      role: "api" as const,
      databaseUrl: db.url,
      env: { RATE_LIMIT_KEY_PER_SECOND: "1000", RATE_LIMIT_ACCOUNT_PER_SECOND: "1000" },
      readyTimeoutMs: 60_000,
    })),
  );
}, 90_000);

afterAll(async () => {
  for (const api of apis) await api.stop();
  await pool?.end();
  await db?.drop();
});

async function account(): Promise<{ id: string; headers: Record<string, string> }> {
  const { account, key } = await withTransaction(pool, async (tx) => {
    const created = await createAccount(tx, {
      name: `rl-${randomUUID().slice(0, 8)}`,
      currency: "USD",
      openingBalance: 100_000_000,
    });
    await addSenderId(tx, created.account.id, "SHIRI", "verified");
    return created;
  });
  return {
    id: account.id,
    headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json" },
  };
}

const shiri = (args: readonly string[]) => cli(db.url, args, { timeoutMs: 60_000 });

/** `n` requests at once, alternating between the two processes: their statuses, and how long it took. */
async function acrossProcesses(
  n: number,
  request: (base: string, i: number) => Promise<{ status: number }>,
): Promise<{ statuses: number[]; elapsedMs: number }> {
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: n }, async (_, i) => (await request((apis[i % 2] as ShiriProcess).base, i)).status),
  );
  return { statuses: answers, elapsedMs: performance.now() - started };
}

describe("rate limits across two API processes on one database", () => {
  it("recipients per minute, set by the CLI, are one budget for both processes", async () => {
    const acct = await account();
    const set = await shiri([
      "rate-limit",
      "set",
      "--account",
      acct.id,
      "--requests-per-second",
      "1000",
      "--recipients-per-minute",
      "10",
    ]);
    expect(set.code, set.stderr).toBe(0);
    const lines = set.stdout.split("\n");
    expect(lines).toHaveLength(2);
    const printed = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(printed).toMatchObject({
      account_id: acct.id,
      requests_per_second: 1000,
      recipients_per_minute: 10,
    });
    expect(typeof printed.updated_at).toBe("string");

    const { statuses, elapsedMs } = await acrossProcesses(30, (base, i) =>
      call(base, "POST", "/api/v1/sms", {
        headers: acct.headers,
        body: { to: `+26377${String(4_000_000 + i)}`, from: "SHIRI", message: "shared" },
      }),
    );
    expect(statuses.filter((s) => s !== 202 && s !== 429)).toEqual([]);
    // Ten a minute between them (each process counting alone would let twenty through), plus one
    // for every six seconds the burst took.
    const accepted = statuses.filter((s) => s === 202).length;
    expect(accepted).toBeGreaterThanOrEqual(10);
    expect(accepted).toBeLessThanOrEqual(10 + Math.floor(elapsedMs / 6_000));
    const { rows } = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE account_id = $1",
      [acct.id],
    );
    expect(rows[0]?.n).toBe(accepted);
  }, 60_000);

  it("requests per second are one budget for both processes, and a new limit applies on the next request", async () => {
    const acct = await account();
    const set = await shiri(["rate-limit", "set", "--account", acct.id, "--requests-per-second", "2"]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ requests_per_second: 2, recipients_per_minute: null });

    const balance = (base: string) => call(base, "GET", "/api/v1/balance", { headers: acct.headers });
    const limited = await acrossProcesses(20, balance);
    expect(limited.statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    const passed = limited.statuses.filter((s) => s === 200).length;
    // Two a second between them, plus two for every second the burst took.
    expect(passed).toBeGreaterThanOrEqual(2);
    expect(passed).toBeLessThanOrEqual(2 + Math.floor((limited.elapsedMs / 1000) * 2));

    // Raised: both processes apply it on the very next request.
    const raised = await shiri(["rate-limit", "set", "--account", acct.id, "--requests-per-second", "100"]);
    expect(raised.code, raised.stderr).toBe(0);
    const after = await acrossProcesses(20, balance);
    expect(after.statuses).toEqual(Array.from({ length: 20 }, () => 200));
  }, 60_000);
});

describe("shiri rate-limit set", () => {
  it("keeps the recipients limit when only requests per second are given", async () => {
    const acct = await account();
    await shiri([
      "rate-limit",
      "set",
      "--account",
      acct.id,
      "--requests-per-second",
      "5",
      "--recipients-per-minute",
      "700",
    ]);
    const again = await shiri(["rate-limit", "set", "--account", acct.id, "--requests-per-second", "0"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ requests_per_second: 0, recipients_per_minute: 700 });
    const { rows } = await pool.query(
      "SELECT requests_per_second, recipients_per_minute FROM account_rate_limits WHERE account_id = $1",
      [acct.id],
    );
    expect(rows).toEqual([{ requests_per_second: 0, recipients_per_minute: 700 }]);
  }, 60_000);

  it("an unknown account: exit 1 with one line; bad or missing numbers: exit 2 (usage)", async () => {
    const [unknown, missing, negative, words] = await Promise.all([
      shiri(["rate-limit", "set", "--account", randomUUID(), "--requests-per-second", "5"]),
      shiri(["rate-limit", "set", "--account", randomUUID()]),
      shiri(["rate-limit", "set", "--account", randomUUID(), "--requests-per-second", "-3"]),
      shiri([
        "rate-limit",
        "set",
        "--account",
        randomUUID(),
        "--requests-per-second",
        "5",
        "--recipients-per-minute",
        "lots",
      ]),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(/^shiri: no account [0-9a-f-]{36}\n$/);
    for (const usage of [missing, negative, words]) {
      expect(usage.code).toBe(2);
      expect(usage.stdout).toBe("");
    }
    expect(missing.stderr).toMatch(/--requests-per-second is required/);
    expect(words.stderr).toMatch(/--recipients-per-minute must be a whole number/);
  }, 90_000);
});
