import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";
import { startOwnPostgres } from "./support/own-postgres.ts";

/**
 * (8) The database server itself restarted under traffic, twice: a Postgres of this scenario's
 * own (embedded, on a free port) is shut down, left down for two seconds and started again while
 * two senders post without pause and a bulk send is being dispatched. The processes stay up,
 * requests get 202 or 503, and every accepted message is dispatched once.
 */
let h: FaultHarness;
beforeAll(async () => {
  const database = await startOwnPostgres();
  // Leases longer than the outage, as in production (5 min): a lease that runs out while the
  // database is down lets the job's next run take the messages, and that is the in-flight window.
  h = await startFaultHarness({
    database,
    env: { DISPATCH_LOCK_SECONDS: "20", DISPATCH_JOB_EXPIRE_SECONDS: "20" },
  });
  restart = (downMs) => database.restart(downMs);
});
afterAll(() => h?.stop());
let restart: (downMs: number) => Promise<void>;

describe("fault: database restarted", () => {
  it("keeps every process up and dispatches every accepted message once", async () => {
    const ids: string[] = [];
    let next = 0;
    let running = true;
    const sender = async () => {
      while (running) {
        const id = await h.send(numbers("netone", 1, next++)[0] as string, "restart");
        if (id) ids.push(id);
        // While the database is down the answers are quick 503s: no need to spin on them.
        else await new Promise((r) => setTimeout(r, 50));
      }
    };
    const senders = [sender(), sender()];
    const answered = (n: number, status?: number) => {
      const seen = () =>
        status === undefined ? h.statuses.length : h.statuses.filter((s) => s === status).length;
      const target = seen() + n;
      return waitFor(() => seen() >= target, {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: `${n} more answers`,
      });
    };
    try {
      await answered(20);
      ids.push(
        ...(await h.bulk([...numbers("econet", 150, 0), ...numbers("telecel", 150, 0)], "restart bulk")),
      );
      await restart(2_000);
      // Accepting again after the restart, before the second one.
      await answered(10, 202);
      await restart(2_000);
      await answered(10, 202);
    } finally {
      running = false;
      await Promise.all(senders);
    }
    await h.reconnect();
    const refused = h.statuses.filter((s) => s === 503).length;
    const report = await checkInvariants(h, {
      scenario: "database restarted",
      ids,
      finalWithinMs: 60_000,
      allowedResends: 0,
    });
    expect(refused, "no request met the database down").toBeGreaterThan(0);
    console.info(
      `[faults] database restarted: ${refused} requests answered 503, ${report.messages} accepted`,
    );
  });
});
