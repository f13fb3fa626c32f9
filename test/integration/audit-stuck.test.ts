/**
 * `shiri audit` names what holds each stuck message up: a batch's hold, the wait for a late answer,
 * a dispatch job due that no worker takes (its carrier unreachable), or no job at all. Econet points at a closed port.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort as closedPort } from "../../bench/lib/shiri-process.ts";
import { audit } from "../../src/audit/audit.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";

let h: DispatchHarness;

beforeAll(async () => {
  h = await startDispatchHarness({ env: { SMPP_ECONET_PORT: String(await closedPort()) } });
});
afterAll(() => h?.stop());

describe("shiri audit on stuck messages", () => {
  it("says why each one has not moved", async () => {
    const [queued, held, lateAnswer, orphan] = [
      await h.send("+263771000001", "waits for econet"),
      await h.send("+263771000002", "held by a batch"),
      await h.send("+263771000004", "its submit timed out"),
      await h.send("+263771000003", "its job lost"),
    ];
    await h.pool.query(
      `UPDATE messages SET locked_until = now() + interval '1 minute', status = 'processing',
                           locked_by = CASE WHEN id = $1 THEN gen_random_uuid() END
        WHERE id = ANY($2)`,
      [held, [held, lateAnswer]],
    );
    // The job of the third is gone (as a job lost with its queue's table would be).
    await h.pool.query(
      "DELETE FROM pgboss.job WHERE name = 'dispatch-econet' AND data -> 'messageIds' ? $1",
      [orphan],
    );
    // Due a while ago: stuck after 0.001 minutes.
    await new Promise((r) => setTimeout(r, 200));
    const report = await audit(h.pool, { stuckMinutes: 0.001, receiptHours: 48 });
    const why = new Map(report.stuck_messages.items.map((m) => [m.id, m.why]));
    expect(report.clean).toBe(false);
    expect(why.get(queued)).toMatch(/dispatch job is due and no worker takes it/);
    expect(why.get(held)).toMatch(/^held by a dispatch batch until /);
    expect(why.get(lateAnswer)).toMatch(/^waits until .* for the carrier's late answer/);
    expect(why.get(orphan)).toMatch(/^no dispatch job carries it/);
  });
});
