import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (13) The API process SIGKILLed mid-flow and a new one started: two senders post without pause
 * (and a bulk send is being dispatched) when it dies. Its clients see resets and refused
 * connections while it is down, never a 5xx; every 202 it gave is dispatched once. A request it
 * committed but could not answer is a message too: it is dispatched like the others.
 */
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness();
});
afterAll(() => h?.stop());

describe("fault: API killed mid-flow", () => {
  it("loses no accepted message and sends none twice", async () => {
    const accepted: string[] = [];
    let next = 0;
    let running = true;
    const sender = async () => {
      while (running) {
        const id = await h.send(numbers("netone", 1, next++)[0] as string, "api killed");
        if (id) accepted.push(id);
        // While nothing listens the refusals are instant: no need to spin on them.
        else await new Promise((r) => setTimeout(r, 50));
      }
    };
    const answers = (n: number) => {
      const target = h.statuses.length + n;
      return waitFor(() => h.statuses.length >= target, {
        timeoutMs: 30_000,
        intervalMs: 5,
        what: `${n} answers`,
      });
    };
    const senders = [sender(), sender()];
    let resetWindow: [number, number];
    try {
      await answers(20);
      accepted.push(
        ...(await h.bulk([...numbers("econet", 100, 0), ...numbers("telecel", 100, 0)], "api bulk")),
      );
      await answers(10);
      const from = h.statuses.length;
      await h.kill(h.api);
      await h.startApi();
      // Requests already on their way to the dead process when the new one came up.
      resetWindow = [from, h.statuses.length + senders.length];
      const ok = () => h.statuses.filter((s) => s === 202).length;
      const before = ok();
      await waitFor(() => ok() >= before + 20, { timeoutMs: 30_000, what: "20 more sends accepted" });
    } finally {
      running = false;
      await Promise.all(senders);
    }
    const resets = h.statuses.slice(resetWindow[0], resetWindow[1]).filter((s) => s === 0).length;
    expect(resets, "no client noticed the kill").toBeGreaterThan(0);
    // Every message of the account: the 202s and any the dead process committed without answering.
    const { rows } = await h.sql.query<{ id: string }>("SELECT id FROM messages WHERE account_id = $1", [
      h.accountId,
    ]);
    const stored = new Set(rows.map((r) => r.id));
    for (const id of accepted) expect(stored.has(id), `accepted ${id} not stored`).toBe(true);
    const unanswered = stored.size - accepted.length;
    // Each sender had at most one request in flight at the kill.
    expect(unanswered).toBeLessThanOrEqual(senders.length);
    const report = await checkInvariants(h, {
      scenario: "API SIGKILL",
      ids: [...stored],
      finalWithinMs: 60_000,
      allowedResends: 0,
      resetWindow,
    });
    console.info(
      `[faults] API SIGKILL: ${resets} requests reset or refused, ${unanswered} committed unanswered, ${report.messages} messages`,
    );
  });
});
