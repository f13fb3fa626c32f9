import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (4) Throttling and refusals: NetOne takes at most 5 submits a second and answers the rest
 * ESME_RTHROTTLED; Econet refuses 30% of submits for good (ESME_RINVDSTADR). Throttled parts are
 * retried until taken; refused messages end failed with the carrier's status; none is sent twice.
 */
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({
    behaviour: { netone: { tpsLimit: 5 }, econet: { rejectRate: 0.3, rejectStatus: 0x0b } },
  });
});
afterAll(() => h?.stop());

describe("fault: throttling and permanent refusals", () => {
  it("retries the throttled, fails the refused, sends nothing twice", async () => {
    const netone = numbers("netone", 30, 0);
    const econet = numbers("econet", 40, 0);
    const ids = await h.bulk([...netone, ...econet], "refusals");
    const report = await checkInvariants(h, {
      scenario: "throttling and refusals",
      ids,
      finalWithinMs: 60_000,
      allowedResends: 0,
    });
    const throttled = h.sims.get("netone").rejections.filter((r) => r.command_status === 0x58);
    expect(throttled.length, "NetOne never throttled").toBeGreaterThan(0);
    const { rows } = await h.sql.query<{ operator: string; status: string; operator_response: string }>(
      "SELECT operator, status, operator_response FROM messages WHERE id = ANY($1)",
      [ids],
    );
    // Every NetOne message got through in the end; Econet's failed are exactly its refusals.
    expect(rows.filter((r) => r.operator === "netone" && r.status !== "success")).toEqual([]);
    const refused = rows.filter((r) => r.operator === "econet" && r.status === "failed");
    expect(refused.length).toBe(h.sims.get("econet").rejections.length);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.operator_response).toBe("ESME_RINVDSTADR");
    expect(report.success + report.failed).toBe(ids.length);
  });
});
