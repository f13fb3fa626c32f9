import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A batch claims many messages at once and a slow carrier takes them a window at a time: the tail
 * of a batch goes out seconds after its claim. A number that opts out meanwhile must get nothing
 * more than what was already on the wire. Before, every message the batch held went, billed.
 */
const WINDOW = 2;
const COUNT = 40;
let h: DispatchHarness;
beforeAll(async () => {
  h = await startDispatchHarness({
    behaviour: { econet: { submitLatencyMs: 300 } },
    env: { SMPP_ECONET_WINDOW_SIZE: String(WINDOW) },
  });
});
afterAll(async () => {
  await h?.stop();
});

describe("a number that opts out while a batch holds its messages", () => {
  it("gets nothing more than what was on the wire; the rest fail OPTED_OUT, released", async () => {
    const to = "+263774700001";
    const atCarrier = () => h.sims.get("econet").accepted.filter((a) => a.destination_addr === to.slice(1));
    // A bulk may name one number many times (the contract bills each).
    const ids = await h.bulk(Array(COUNT).fill(to), "in flight when it opted out");
    await waitFor(() => atCarrier().length > 0, { timeoutMs: 10_000, what: "the first submit" });
    const res = await call(h.t.base, "POST", "/api/v1/opt-outs", {
      headers: h.acct.headers,
      body: { number: to },
    });
    expect(res.status).toBe(201);
    const sentBefore = atCarrier().length;
    await h.waitUntilSettled(ids, { timeoutMs: 30_000 });
    // What was on the wire when the opt-out was announced, and no more than a window after it.
    expect(atCarrier().length).toBeLessThanOrEqual(sentBefore + 2 * WINDOW);
    const { rows } = await h.pool.query<{
      status: string;
      operator_response: string;
      billing: string;
      n: number;
    }>(
      `SELECT status, operator_response, billing, count(*)::int AS n FROM messages WHERE id = ANY($1)
        GROUP BY 1, 2, 3 ORDER BY 1`,
      [ids],
    );
    const failed = rows.find((r) => r.status === "failed");
    expect(failed).toMatchObject({ operator_response: "OPTED_OUT", billing: "released" });
    expect((failed?.n ?? 0) + atCarrier().length).toBe(COUNT);
    await expectLedgerBalanced(h.pool, h.acct.id);
  }, 60_000);
});
