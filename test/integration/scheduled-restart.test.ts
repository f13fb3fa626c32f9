import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulators } from "../../carriers/simulator/index.ts";
import { startApiBesideSimulators } from "../support/dispatch.ts";
import { call, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Scheduled messages live in Postgres only (the message with its send_at, the dispatch job with
 * the same start time): a whole service (API and worker) stopped and another started on the same
 * database sends them — one that fell due while nothing ran as soon as it is back, one due later
 * at its time and not before — each once.
 */
let sims: RunningSimulators;
let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  // This process only holds the database and the accounts: it runs no worker.
  ({ sims, t } = await startApiBesideSimulators());
  acct = await t.account({ balance: 1_000_000 });
});
afterAll(async () => {
  await t?.stop();
  await sims?.stop();
});

describe("scheduled sends across a restart", () => {
  it("are sent by the service started again: the overdue one at once, the later one at its send_at", async () => {
    const first = await t.startAnother("all");
    const schedule = async (to: string, message: string, sendAt: Date) => {
      const res = await call(first.base, "POST", "/api/v1/sms", {
        headers: acct.headers,
        body: { to, from: "SHIRI", message, send_at: sendAt.toISOString() },
      });
      expect(res.status).toBe(202);
      return (res.body as { id: string }).id;
    };
    const overdueAt = new Date(Date.now() + 1_500);
    const laterAt = new Date(Date.now() + 6_000);
    const overdue = await schedule("+263771000001", "due while down", overdueAt);
    const later = await schedule("+263771000002", "due after restart", laterAt);
    await first.stop();

    await waitFor(() => Date.now() > overdueAt.getTime() + 500, {
      timeoutMs: 5_000,
      what: "the first send_at",
    });
    const econet = sims.get("econet");
    const submits = (text: string) => econet.accepted.filter((a) => a.text === text);
    expect(submits("due while down")).toHaveLength(0);

    const second = await t.startAnother("all");
    const status = async (id: string) =>
      (
        (await call(second.base, "GET", `/api/v1/sms/${id}`, { headers: acct.headers })).body as {
          data: { status: string };
        }
      ).data.status;
    await waitFor(async () => (await status(overdue)) === "success", {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: "the overdue message to be sent",
    });
    await waitFor(async () => (await status(later)) === "success", {
      timeoutMs: 20_000,
      intervalMs: 50,
      what: "the later message to be sent",
    });
    await second.stop();

    expect(submits("due while down")).toHaveLength(1);
    const [laterSubmit, ...again] = submits("due after restart");
    expect(again).toHaveLength(0);
    expect(laterSubmit?.at.getTime()).toBeGreaterThanOrEqual(laterAt.getTime());
    // Each billed once: the account's captures add up to its two holds, no more.
    const { rows } = await t.service.pool.query<{ held: number; captured: number }>(
      `SELECT (sum(amount) FILTER (WHERE kind = 'hold'))::int AS held,
              (sum(amount) FILTER (WHERE kind = 'capture'))::int AS captured
         FROM ledger_entries WHERE account_id = $1`,
      [acct.id],
    );
    expect(rows[0]?.held).toBeGreaterThan(0);
    expect(rows[0]?.captured).toBe(rows[0]?.held);
  });
});
