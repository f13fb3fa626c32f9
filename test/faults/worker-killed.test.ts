import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (2) The worker SIGKILLed mid-flow and a new one started: on the default settings, the killed
 * worker's holds (DISPATCH_LOCK_SECONDS), its jobs' heartbeats and its bind slot run out within
 * seconds, and the new one finishes its messages, all within 60 s of the kill. Only segments on the wire at the kill (claimed,
 * acceptance not yet recorded) may reach the carrier twice.
 */
let h: FaultHarness;
beforeAll(async () => {
  // Answers 400 ms late: at most a window (50) in 0.4 s per operator, so the 900 messages take
  // three seconds or more and the kill lands with work left, however fast (or busy) the machine.
  const slow = { submitLatencyMs: 400 };
  h = await startFaultHarness({ behaviour: { econet: slow, netone: slow, telecel: slow } });
});
afterAll(() => h?.stop());

describe("fault: worker killed mid-flow", () => {
  it("resends only what was on the wire and finishes everything", async () => {
    const ids = await h.bulk(
      [...numbers("econet", 300, 0), ...numbers("netone", 300, 0), ...numbers("telecel", 300, 0)],
      "killed",
    );
    const count = async (sql: string) => (await h.sql.query<{ n: number }>(sql, [ids])).rows[0]?.n ?? 0;
    // Killed once 100 segments are recorded as accepted (they are written as their answers arrive):
    // mid-flow whatever the batches look like. Waiting for 100 messages `success` instead waited
    // for a whole batch's settle, which, once settles got fast, came with every batch done.
    await waitFor(
      async () =>
        (await count("SELECT count(*)::int AS n FROM message_parts WHERE message_id = ANY($1)")) >= 100,
      { timeoutMs: 30_000, intervalMs: 20, what: "the first worker to get going" },
    );
    const killedAt = Date.now();
    await h.kill(h.worker);
    // What the database knew at the kill: claimed, with no accepted part recorded.
    const { rows: onTheWire } = await h.sql.query<{ to: string }>(
      `SELECT "to" FROM messages m WHERE id = ANY($1) AND status = 'processing'
          AND NOT EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = m.id)`,
      [ids],
    );
    const done = await count(
      "SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND status IN ('success', 'failed')",
    );
    expect(done, "the kill came after everything was done").toBeLessThan(ids.length);
    await h.startWorker();
    const report = await checkInvariants(h, {
      scenario: "worker SIGKILL",
      ids,
      faultAt: killedAt,
      finalWithinMs: 60_000,
      allowedResends: onTheWire.length,
      mayRepeat: new Set(onTheWire.map((r) => r.to)),
    });
    console.info(
      `[faults] worker SIGKILL: ${onTheWire.length} on the wire at the kill, ${report.resends} resent, all final ${(report.finalAfterMs / 1000).toFixed(1)} s after the kill`,
    );
  });
});
