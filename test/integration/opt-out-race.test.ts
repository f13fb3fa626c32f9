import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { call } from "../support/service.ts";

/**
 * A send and its number's opt-out in flight together: each transaction is blind to the other's
 * uncommitted rows, so the send does not see the number listed and the opt-out's sweep does not
 * see the message. The end of that race is set up here directly: a waiting message to a number
 * that is on the list, which nothing failed. The worker claiming it must fail it OPTED_OUT and
 * never submit it; the confirmation of a STOP, which ignores the list, still goes.
 */
let h: DispatchHarness;
beforeAll(async () => {
  h = await startDispatchHarness();
});
afterAll(async () => {
  await h?.stop();
});

const submitted = (to: string) =>
  h.sims.get("econet").accepted.filter((a) => a.destination_addr === to.slice(1)).length;

/** A message to `to` due in a second and a half: long enough to list its number first. */
async function scheduled(to: string): Promise<string> {
  const res = await call(h.t.base, "POST", "/api/v1/sms", {
    headers: h.acct.headers,
    body: {
      to,
      from: "SHIRI",
      message: "raced its opt-out",
      send_at: new Date(Date.now() + 1_500).toISOString(),
    },
  });
  expect(res.status).toBe(202);
  return (res.body as { id: string }).id;
}

/** The number listed as an opt-out that committed unseen by the send, its sweep blind to the message. */
const listedUnseen = (to: string) =>
  h.pool.query("INSERT INTO opt_outs (account_id, number, source) VALUES ($1, $2, 'api')", [
    h.acct.id,
    to.slice(1),
  ]);

const row = async (id: string) =>
  (
    await h.pool.query<{ status: string; operator_response: string; billing: string }>(
      "SELECT status, operator_response, billing FROM messages WHERE id = $1",
      [id],
    )
  ).rows[0];

describe("a send that raced its number's opt-out", () => {
  it("is failed OPTED_OUT when a worker claims it, released, and never submitted", async () => {
    const to = "+263774600001";
    const id = await scheduled(to);
    await listedUnseen(to);
    await h.waitUntilSettled([id], { timeoutMs: 15_000 });
    // Before, it went to the number that had opted out, and was billed.
    expect(await row(id)).toMatchObject({
      status: "failed",
      operator_response: "OPTED_OUT",
      billing: "released",
    });
    expect(submitted(to)).toBe(0);
    await expectLedgerBalanced(h.pool, h.acct.id);
  });

  it("still goes when the message ignores the list, as a STOP's confirmation does", async () => {
    const to = "+263774600002";
    const id = await scheduled(to);
    await h.pool.query("UPDATE messages SET ignores_opt_outs = true WHERE id = $1", [id]);
    await listedUnseen(to);
    await h.waitUntilSettled([id], { timeoutMs: 15_000 });
    expect((await row(id))?.status).toBe("success");
    expect(submitted(to)).toBe(1);
  });

  it("written by the version before (no word on the list), is judged as that version judged it", async () => {
    // Made after its number opted out (as that version made a STOP's confirmation): it goes.
    const after = "+263774600003";
    const confirmation = await scheduled(after);
    await h.pool.query(
      `INSERT INTO opt_outs (account_id, number, source, created_at)
       VALUES ($1, $2, 'keyword', now() - interval '1 minute')`,
      [h.acct.id, after.slice(1)],
    );
    // Made before the opt-out: it does not.
    const before = "+263774600004";
    const offer = await scheduled(before);
    await listedUnseen(before);
    await h.pool.query("UPDATE messages SET ignores_opt_outs = NULL WHERE id = ANY($1)", [
      [confirmation, offer],
    ]);
    await h.waitUntilSettled([confirmation, offer], { timeoutMs: 15_000 });
    expect([(await row(confirmation))?.status, (await row(offer))?.status]).toEqual(["success", "failed"]);
    expect([submitted(after), submitted(before)]).toEqual([1, 0]);
  });
});
