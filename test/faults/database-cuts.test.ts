import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (1) Every database backend of Shiri terminated twice under traffic: two senders post single
 * messages without pause and a bulk send is being dispatched when the cuts come. The processes
 * stay up, requests get 202 or 503, and every accepted message is dispatched once.
 */
const LONG = `${"Two segments through a database cut: each one submitted once. ".repeat(3)}end`;
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness();
});
afterAll(() => h?.stop());

/** Terminates every backend of the service's database but the test's own; how many it ended. */
async function cut(): Promise<number> {
  const { rows } = await h.sql.query<{ ended: boolean }>(
    `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return rows.filter((r) => r.ended).length;
}

describe("fault: database backends terminated twice", () => {
  it("keeps every process up and dispatches every accepted message once", async () => {
    const ids: string[] = [];
    let lastCutAt = Date.now();
    let next = 0;
    let running = true;
    const sender = async () => {
      while (running) {
        const id = await h.send(numbers("netone", 1, next++)[0] as string, "cut");
        if (id) ids.push(id);
      }
    };
    const senders = [sender(), sender()];
    const sent = (n: number) => {
      const target = h.statuses.length + n;
      return new Promise<void>((resolve, reject) => {
        const deadline = Date.now() + 30_000;
        const poll = () => {
          if (h.statuses.length >= target) resolve();
          else if (Date.now() > deadline) reject(new Error(`no ${n} more answers`));
          else setTimeout(poll, 20);
        };
        poll();
      });
    };
    try {
      await sent(20);
      ids.push(...(await h.bulk([...numbers("econet", 150, 0), ...numbers("telecel", 100, 0)], "cut bulk")));
      // Messages of two segments too: at most one submit per segment holds per part.
      ids.push(...(await h.bulk(numbers("telecel", 50, 100), LONG)));
      expect(await cut()).toBeGreaterThan(0);
      await sent(20);
      expect(await cut()).toBeGreaterThan(0);
      lastCutAt = Date.now();
      await sent(20);
    } finally {
      running = false;
      await Promise.all(senders);
    }
    const report = await checkInvariants(h, {
      scenario: "database cuts",
      ids,
      faultAt: lastCutAt,
      finalWithinMs: 60_000,
      allowedResends: 0,
    });
    console.info(
      `[faults] database cuts: ${ids.length} accepted, all final ${(report.finalAfterMs / 1000).toFixed(1)} s after the second cut`,
    );
  });
});
