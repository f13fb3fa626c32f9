import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATUS } from "../../src/smpp/command-status.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A carrier that answers every submit of a number with a status that may pass (ESME_RSUBMITFAIL):
 * before, the message was submitted again after every back-off until its validity ended (some
 * 1,400 submits in 24 h), `processing` throughout. It fails after DISPATCH_MAX_REFUSALS tries,
 * counted while the carrier accepts other submits. A carrier that refuses everything is having a
 * bad spell, and throttling-like statuses (ESME_RMSGQFUL) are the link's state: neither fails a
 * message.
 */
const row = (h: DispatchHarness, id: string) =>
  h.pool
    .query<{ status: string; operator_response: string | null; billing: string }>(
      "SELECT status, operator_response, billing FROM messages WHERE id = $1",
      [id],
    )
    .then((r) => r.rows[0]);

describe("a number the carrier refuses with a status that may pass", () => {
  const to = "+263775900001";
  let h: DispatchHarness;
  beforeAll(async () => {
    h = await startDispatchHarness({
      behaviour: { econet: { rejectDestinations: [to.slice(1)], rejectStatus: STATUS.ESME_RSUBMITFAIL } },
      env: { DISPATCH_MAX_REFUSALS: "3" },
    });
  });
  afterAll(() => h?.stop());

  it("is tried DISPATCH_MAX_REFUSALS times, then fails with the carrier's status, its hold released", async () => {
    // The carrier takes other numbers' messages: its refusals of this one are the message's.
    const taken = await h.send("+263775900011", "taken");
    await h.waitUntilSettled([taken], { timeoutMs: 30_000 });
    const id = await h.send(to, "always refused");
    await h.waitUntilSettled([id], { timeoutMs: 30_000 });
    expect(await row(h, id)).toEqual({
      status: "failed",
      operator_response: "ESME_RSUBMITFAIL",
      billing: "released",
    });
    const refused = () => h.sims.get("econet").rejections.filter((r) => r.destination_addr === to.slice(1));
    expect(refused()).toHaveLength(3);
    // Not submitted again afterwards (a retry would come within 4 s of back-off).
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(refused()).toHaveLength(3);
    await expectLedgerBalanced(h.pool, h.acct.id);
  }, 45_000);
});

describe("a carrier that refuses every submit (a bad spell)", () => {
  const to = "+263775900003";
  let h: DispatchHarness;
  beforeAll(async () => {
    h = await startDispatchHarness({
      behaviour: { econet: { rejectDestinations: [to.slice(1)], rejectStatus: STATUS.ESME_RSUBMITFAIL } },
      env: { DISPATCH_MAX_REFUSALS: "2" },
    });
  });
  afterAll(() => h?.stop());

  it("counts no refusal while it accepts nothing: the message waits past DISPATCH_MAX_REFUSALS tries", async () => {
    const id = await h.send(to, "refused in a bad spell");
    const refused = () => h.sims.get("econet").rejections.filter((r) => r.destination_addr === to.slice(1));
    await waitFor(() => refused().length > 3, { timeoutMs: 30_000, what: "more tries than the limit" });
    expect((await row(h, id))?.status).toBe("processing");
  }, 45_000);
});

describe("a number the carrier answers with a link-level status", () => {
  const to = "+263735900002";
  let h: DispatchHarness;
  beforeAll(async () => {
    h = await startDispatchHarness({
      behaviour: { telecel: { rejectDestinations: [to.slice(1)], rejectStatus: STATUS.ESME_RMSGQFUL } },
      env: { DISPATCH_MAX_REFUSALS: "1" },
    });
  });
  afterAll(() => h?.stop());

  it("is never failed for it: it waits, and goes once the carrier takes it", async () => {
    const id = await h.send(to, "queue full");
    // The first try's batch gives the message back (each of its submits answered queue full),
    // and a second try begins: the try was not counted as a refusal of the message.
    const firstBatch = 8;
    await waitFor(
      () =>
        h.sims.get("telecel").rejections.filter((r) => r.destination_addr === to.slice(1)).length >
        firstBatch,
      { timeoutMs: 45_000, what: "a second try of the message" },
    );
    expect((await row(h, id))?.status).toBe("processing");
    h.sims.get("telecel").setBehaviour({ rejectDestinations: [] });
    await h.waitUntilSettled([id], { timeoutMs: 45_000 });
    expect(await row(h, id)).toMatchObject({ status: "success", billing: "captured" });
  }, 100_000);
});
