import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (6) An SMSC down past the messages' validity: Econet's simulator is stopped, so nothing can
 * bind. Its messages end failed VALIDITY_EXPIRED with their holds released (the sweeper, not a
 * carrier answer, ends them); NetOne's flow meanwhile.
 */
let h: FaultHarness;
beforeAll(async () => {
  // 3.6 s of validity: the sweeper (every 5 s) expires Econet's messages within seconds.
  h = await startFaultHarness({ env: { MESSAGE_VALIDITY_HOURS: "0.001" } });
  await h.sims.get("econet").stop();
});
afterAll(() => h?.stop());

describe("fault: SMSC down past the validity", () => {
  it("fails the messages VALIDITY_EXPIRED, releases their holds, lets the others flow", async () => {
    const before = h.sims.get("econet").accepted.length;
    const ids = await h.bulk([...numbers("econet", 30, 0), ...numbers("netone", 10, 0)], "down too long");
    await checkInvariants(h, {
      scenario: "SMSC down past validity",
      ids,
      finalWithinMs: 30_000,
      allowedResends: 0,
    });
    const { rows } = await h.sql.query<{ operator: string; status: string; reason: string; billing: string }>(
      "SELECT operator, status, operator_response AS reason, billing FROM messages WHERE id = ANY($1)",
      [ids],
    );
    const econet = rows.filter((r) => r.operator === "econet");
    expect(econet).toHaveLength(30);
    for (const r of econet)
      expect(r).toMatchObject({ status: "failed", reason: "VALIDITY_EXPIRED", billing: "released" });
    expect(rows.filter((r) => r.operator === "netone" && r.status === "success")).toHaveLength(10);
    expect(h.sims.get("econet").accepted.length).toBe(before);
    const { rows: money } = await h.sql.query<{ held: number }>(
      "SELECT COALESCE(sum(charge), 0)::int AS held FROM messages WHERE billing = 'held'",
    );
    expect(money[0]?.held).toBe(0);
  });
});
