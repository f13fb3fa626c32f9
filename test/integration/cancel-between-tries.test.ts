import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A message the carrier refused for now (a transient generic_nack, a carrier down) is processing
 * between tries, held by no run. The carrier has nothing of it, so its sender may still cancel it,
 * and an opt-out of its number fails it: it must never go out after either. One whose submit went
 * unanswered may be at the carrier already: not cancelled (409), as one the carrier accepted.
 */
const TIMEOUT_MS = 1_000;
let h: DispatchHarness;
beforeAll(async () => {
  h = await startDispatchHarness({ env: { SMPP_ECONET_RESPONSE_TIMEOUT_MS: String(TIMEOUT_MS) } });
});
afterAll(async () => {
  await h?.stop();
});

const row = async (id: string) =>
  (
    await h.pool.query<{
      status: string;
      operator_response: string;
      billing: string;
      leased: boolean;
      attempts: number;
      maybe_at_carrier: boolean;
    }>(
      `SELECT status, operator_response, billing, locked_by IS NOT NULL AS leased, attempts, maybe_at_carrier
         FROM messages WHERE id = $1`,
      [id],
    )
  ).rows[0];

/**
 * Until the message has been tried and refused for now, and waits for its next try: no run holds
 * it (its lease may still be kept while a late answer can come).
 */
const betweenTries = (id: string, tries = 1) =>
  waitFor(
    async () => {
      const r = await row(id);
      return r?.status === "processing" && !r.leased && r.attempts >= tries;
    },
    { timeoutMs: 15_000, intervalMs: 20, what: "the message between tries" },
  );

const accepted = (to: string) =>
  h.sims.get("econet").accepted.filter((a) => a.destination_addr === to.slice(1)).length;

/**
 * Sends to `to` behind a carrier that refuses every submit for now, does `act` while the message
 * waits between tries, lets the carrier recover, and gives a while for a try that must not come.
 */
async function refusedForNowThen(to: string, act: (id: string) => Promise<void>): Promise<string> {
  h.sims.get("econet").setBehaviour({ genericNackRate: 1 });
  try {
    const id = await h.send(to, "refused for now");
    await betweenTries(id);
    await act(id);
    h.sims.get("econet").setBehaviour({ genericNackRate: 0 });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    return id;
  } finally {
    h.sims.get("econet").setBehaviour({ genericNackRate: 0 });
  }
}

/** The message failed with `response`, its hold released, and never reached the carrier. */
async function expectEndedUnsent(id: string, to: string, response: string): Promise<void> {
  expect(await row(id)).toMatchObject({ status: "failed", operator_response: response, billing: "released" });
  expect(accepted(to)).toBe(0);
  await expectLedgerBalanced(h.pool, h.acct.id);
}

const optOut = (number: string) =>
  call(h.t.base, "POST", "/api/v1/opt-outs", { headers: h.acct.headers, body: { number } });

describe("a message between tries", () => {
  it("is cancelled, released, and never sent, though its first try was refused for now", async () => {
    const to = "+263774500001";
    const id = await refusedForNowThen(to, async (waiting) => {
      const res = await call(h.t.base, "DELETE", `/api/v1/sms/${waiting}`, { headers: h.acct.headers });
      // Before, 409 "already dispatched": it stayed held and went out once the carrier took submits.
      expect(res.status).toBe(200);
    });
    await expectEndedUnsent(id, to, "CANCELLED");
  });

  it("fails OPTED_OUT when its number opts out, and never goes to it", async () => {
    const to = "+263774500002";
    const id = await refusedForNowThen(to, async () => {
      const res = await optOut(to);
      expect(res.status).toBe(201);
    });
    // Before, it stayed processing and was delivered to the number once the carrier recovered.
    await expectEndedUnsent(id, to, "OPTED_OUT");
  });

  it("is not tried again when its number opts out while a worker hands it over", async () => {
    // Each submit refused for now, 600 ms after it went: the opt-out comes while the run holds it.
    h.sims.get("econet").setBehaviour({ genericNackRate: 1, submitLatencyMs: 600 });
    const to = "+263774500004";
    try {
      const id = await h.send(to, "opted out in flight");
      await waitFor(async () => (await row(id))?.leased === true, {
        timeoutMs: 15_000,
        intervalMs: 10,
        what: "the message in a worker's hands",
      });
      const res = await optOut(to);
      expect(res.status).toBe(201);
      // The refusal (decided as it is answered) ends that run; then the carrier recovers.
      await waitFor(async () => (await row(id))?.leased === false, { what: "the run's end" });
      h.sims.get("econet").setBehaviour({ genericNackRate: 0, submitLatencyMs: 0 });
      await h.waitUntilSettled([id], { timeoutMs: 15_000 });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // Before, the run gave it back for another try, which went to the number that had opted out.
      await expectEndedUnsent(id, to, "OPTED_OUT");
    } finally {
      h.sims.get("econet").setBehaviour({ genericNackRate: 0, submitLatencyMs: 0 });
    }
  });

  it("is not cancelled when a submit of it went unanswered: the carrier may have it", async () => {
    // Answers past the late-answer window: the carrier takes the submit, Shiri never hears it.
    h.sims.get("econet").setBehaviour({ submitLatencyMs: TIMEOUT_MS * 5 });
    const to = "+263774500003";
    try {
      const id = await h.send(to, "maybe at the carrier");
      await betweenTries(id);
      expect(await row(id)).toMatchObject({ maybe_at_carrier: true });
      const res = await call(h.t.base, "DELETE", `/api/v1/sms/${id}`, { headers: h.acct.headers });
      expect(res.status).toBe(409);
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });
      await h.waitUntilSettled([id], { timeoutMs: 20_000 });
      expect(await row(id)).toMatchObject({ status: "success", billing: "captured" });
      expect(accepted(to)).toBe(2);
    } finally {
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });
    }
  });
});
