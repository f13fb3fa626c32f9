import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort as closedPort } from "../../bench/lib/shiri-process.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { shiri as cli } from "../support/cli.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Money is never stuck: the validity sweeper fails and releases messages whose carrier is down,
 * the database refuses a second capture or release of one message, and `shiri audit` tells a
 * clean ledger from a corrupted one. Econet points at a closed port: nothing reaches it.
 */
/** 3.6 s: a message Econet cannot take expires within seconds. */
const VALIDITY_HOURS = "0.001";

let h: DispatchHarness;

const shiri = (args: readonly string[]) => cli(h.t.database.url, args);

async function expiredCount(): Promise<number> {
  const metric = await h.t.service.metrics.messagesExpired.get();
  return metric.values.find((v) => v.labels.operator === "econet")?.value ?? 0;
}

beforeAll(async () => {
  const port = String(await closedPort());
  h = await startDispatchHarness({
    env: { MESSAGE_VALIDITY_HOURS: VALIDITY_HOURS, SMPP_ECONET_PORT: port },
  });
});
afterAll(() => h?.stop());

describe("validity sweeper", () => {
  it("fails and releases a message past its validity while its carrier is unreachable", async () => {
    const before = await balanceNow(h.pool, h.acct.id);
    const expiredBefore = await expiredCount();
    const res = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      // A closed loopback port: the event is recorded, its delivery fails off this path.
      body: {
        to: "+263771234567",
        from: "SHIRI",
        message: "never bound",
        webhook_url: "http://127.0.0.1:9/hook",
      },
    });
    expect(res.status).toBe(202);
    const id = (res.body as { id: string }).id;
    const held = await balanceNow(h.pool, h.acct.id);
    expect(held?.held).toBeGreaterThan(0);
    expect(held?.available).toBeLessThan(before?.available ?? 0);

    await waitFor(async () => (await h.statusOf([id])).get(id)?.status === "failed", {
      timeoutMs: 20_000,
      intervalMs: 100,
      what: "the sweeper to fail the expired message",
    });
    const { rows } = await h.pool.query(
      "SELECT status, billing, operator_response, attempts FROM messages WHERE id = $1",
      [id],
    );
    // Never claimed (attempts 0): the sweeper, not a worker's claim, failed it.
    expect(rows[0]).toEqual({
      status: "failed",
      billing: "released",
      operator_response: "VALIDITY_EXPIRED",
      attempts: 0,
    });
    const ledger = await h.pool.query("SELECT kind FROM ledger_entries WHERE message_id = $1 ORDER BY id", [
      id,
    ]);
    expect(ledger.rows.map((r) => r.kind)).toEqual(["hold", "release"]);
    const events = await h.pool.query(
      "SELECT type FROM webhook_events WHERE message_id = $1 ORDER BY created_at",
      [id],
    );
    expect(events.rows.map((r) => r.type)).toContain("message.failed");

    const after = await balanceNow(h.pool, h.acct.id);
    expect(after).toEqual(before);
    await expectLedgerBalanced(h.pool, h.acct.id);
    expect(await expiredCount()).toBe(expiredBefore + 1);
  }, 30_000);
});

// Captures move no balance and are one ledger row a settle (docs/decisions/0032): a message is
// captured once by its billing, which the lifecycle tests hold to.
describe("ledger: one release per message", () => {
  it("the database refuses a second release row for one message", async () => {
    const messageId = crypto.randomUUID();
    const insert = () =>
      h.pool.query(
        "INSERT INTO ledger_entries (account_id, kind, amount, message_id) VALUES ($1, 'release', 1, $2)",
        [h.acct.id, messageId],
      );
    await insert();
    await expect(insert()).rejects.toMatchObject({ code: "23505" });
    await h.pool.query("DELETE FROM ledger_entries WHERE message_id = $1", [messageId]);
  });
});

describe("shiri audit", () => {
  it("is clean after traffic and exits 1 with the account listed once a balance row is corrupted", async () => {
    const ids = await h.bulk(
      Array.from({ length: 20 }, (_, i) => `+26371${String(4_000_000 + i)}`),
      "audited traffic",
    );
    await h.waitUntilSettled(ids, { timeoutMs: 30_000 });
    await expectLedgerBalanced(h.pool, h.acct.id);

    const clean = await shiri(["audit"]);
    expect(clean.code, clean.stderr).toBe(0);
    const report = JSON.parse(clean.stdout) as Record<string, { count: number } | boolean | number>;
    expect(report.clean).toBe(true);
    expect(report.accounts_checked).toBeGreaterThanOrEqual(1);
    expect(report.balance_mismatches).toEqual({ count: 0, items: [] });

    await h.pool.query("UPDATE account_balances SET balance = balance + 7 WHERE account_id = $1", [
      h.acct.id,
    ]);
    try {
      const dirty = await shiri(["audit"]);
      expect(dirty.code).toBe(1);
      expect(dirty.stdout.split("\n")).toHaveLength(2);
      // The failure in one line on stderr, as docs/operations.md says of every exit 1.
      expect(dirty.stderr).toBe("shiri: audit not clean: 1 balance mismatch\n");
      const out = JSON.parse(dirty.stdout) as {
        clean: boolean;
        balance_mismatches: {
          count: number;
          items: { account_id: string; available: number; available_from_ledger: number }[];
        };
      };
      expect(out.clean).toBe(false);
      expect(out.balance_mismatches.count).toBe(1);
      const [item] = out.balance_mismatches.items;
      expect(item?.account_id).toBe(h.acct.id);
      expect((item?.available ?? 0) - (item?.available_from_ledger ?? 0)).toBe(7);
    } finally {
      await h.pool.query("UPDATE account_balances SET balance = balance - 7 WHERE account_id = $1", [
        h.acct.id,
      ]);
    }

    const bad = await shiri(["audit", "--stuck-minutes", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/--stuck-minutes must be a positive number/);
  }, 90_000);
});
