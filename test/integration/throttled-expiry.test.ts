import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATUS } from "../../src/smpp/command-status.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A carrier that throttles a message holds each of its submits back for longer and longer (the
 * session's pause grows to 10 s), and a batch tries a throttled part again several times. A
 * message whose validity ran out meanwhile must not go out on one of those tries: before, the
 * carrier took it 14 s past its expires_at, and it was billed and delivered.
 */
const to = "+263775800001";
let h: DispatchHarness;
beforeAll(async () => {
  h = await startDispatchHarness({
    behaviour: { econet: { rejectDestinations: [to.slice(1)], rejectStatus: STATUS.ESME_RTHROTTLED } },
  });
});
afterAll(async () => {
  await h?.stop();
});

describe("a message the carrier throttles past its validity", () => {
  it("is never submitted after it expired: it fails EXPIRED, its hold released", async () => {
    // Due in a second and a half; its validity is cut to four seconds past that (the API's least
    // is a minute), so it runs out while the carrier still throttles it.
    const res = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: {
        to,
        from: "SHIRI",
        message: "throttled past its validity",
        send_at: new Date(Date.now() + 1_500).toISOString(),
        validity_period: 60,
      },
    });
    expect(res.status).toBe(202);
    const id = (res.body as { id: string }).id;
    const { rows } = await h.pool.query<{ expires_at: Date }>(
      "UPDATE messages SET expires_at = send_at + interval '4 seconds' WHERE id = $1 RETURNING expires_at",
      [id],
    );
    const expiresAt = rows[0]?.expires_at.getTime() ?? 0;
    // The carrier stops throttling once the message has expired, while its batch may still try it.
    await waitFor(() => Date.now() > expiresAt + 1_000, { timeoutMs: 10_000, what: "the expiry" });
    h.sims.get("econet").setBehaviour({ rejectDestinations: [] });
    await h.waitUntilSettled([id], { timeoutMs: 40_000 });
    const accepted = h.sims.get("econet").accepted.filter((a) => a.destination_addr === to.slice(1));
    expect(accepted).toEqual([]);
    const row = await h.pool.query<{ status: string; operator_response: string; billing: string }>(
      "SELECT status, operator_response, billing FROM messages WHERE id = $1",
      [id],
    );
    expect(row.rows[0]).toEqual({ status: "failed", operator_response: "EXPIRED", billing: "released" });
    await expectLedgerBalanced(h.pool, h.acct.id);
  }, 60_000);
});
