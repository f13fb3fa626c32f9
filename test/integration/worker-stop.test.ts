import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulators } from "../../carriers/simulator/index.ts";
import { startApiBesideSimulators } from "../support/dispatch.ts";
import { call, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A worker told to stop (SIGTERM) while its batches hold many messages behind a slow carrier
 * waits for the answers to what is on the wire, and gives the rest back for another worker. Before,
 * it went on submitting everything it had claimed, with no end in sight: under Compose's 30 s
 * grace a SIGKILL then cut it off mid-window, and those handsets got the message twice.
 */
const COUNT = 300;
let sims: RunningSimulators;
let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  ({ sims, t } = await startApiBesideSimulators());
  acct = await t.account({ balance: 1_000_000_000 });
});
afterAll(async () => {
  await t?.stop();
  await sims?.stop();
});

const numbers = Array.from({ length: COUNT }, (_, i) => `+26377${String(7_100_000 + i)}`);
const atCarrier = (text: string) => sims.get("econet").accepted.filter((a) => a.text === text);

describe("a worker that stops with a slow carrier's batches in hand", () => {
  it("sends nothing more, gives the rest back, and the next worker sends each once", async () => {
    const econet = sims.get("econet");
    econet.setBehaviour({ submitLatencyMs: 1_500 });
    const first = await t.startAnother("worker");
    await waitFor(() => econet.boundSessions > 0, { timeoutMs: 10_000, what: "the econet bind" });
    const text = `stopping ${Date.now()}`;
    const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
      headers: acct.headers,
      body: { to: numbers, from: "SHIRI", message: text },
    });
    expect(res.status).toBe(202);
    const ids = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    await waitFor(() => atCarrier(text).length > 0, { timeoutMs: 10_000, what: "the first submits" });

    await first.stop();
    // What was on the wire when it stopped: a window's worth, not the 300 it had claimed.
    const sentByFirst = atCarrier(text).length;
    expect(sentByFirst).toBeLessThan(COUNT / 2);
    const { rows } = await t.service.pool.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM messages WHERE id = ANY($1) GROUP BY status",
      [ids],
    );
    // Given back, not failed: nothing of it is lost.
    expect(rows.find((r) => r.status === "failed")).toBeUndefined();

    econet.setBehaviour({ submitLatencyMs: 0 });
    await t.startAnother("worker");
    await waitFor(
      async () => {
        const settled = await t.service.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND status = 'success'",
          [ids],
        );
        return settled.rows[0]?.n === COUNT;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: "every message sent" },
    );
    const perNumber = new Map<string, number>();
    for (const a of atCarrier(text))
      perNumber.set(a.destination_addr, (perNumber.get(a.destination_addr) ?? 0) + 1);
    expect(perNumber.size).toBe(COUNT);
    expect([...perNumber.values()].filter((n) => n > 1)).toEqual([]);
  });
});
