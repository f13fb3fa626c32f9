/**
 * A message whose submit timed out is not sent again while the carrier may still answer it: the
 * settle keeps its lease until the late-answer window ends (src/lifecycle/outcomes.ts giveUpLease),
 * so no job that names it claims it before then, not only its own retry, which starts after the
 * window. Before, any other job naming it (a busy or lease-lost deferral, pg-boss's retry of a job
 * whose heartbeat lapsed) claimed it at once and submitted the segment again. Here the other job is
 * enqueued by hand, against a carrier that is not Shiri's simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueDispatch } from "../../src/queue/boss.ts";
import { type ForeignCarrier, startForeignCarrier } from "../support/foreign-carrier.ts";
import { waitFor } from "../support/wait-for.ts";

const DEST = "263771700003";
let carrier: ForeignCarrier;
beforeAll(async () => {
  carrier = await startForeignCarrier({
    // Answered ESME_ROK 5 s after the submit: past the 2 s timeout, inside the 6 s late window.
    script: (destination) =>
      destination === DEST ? { receipt: false, answerAfterReceiptMs: 5_000 } : undefined,
  });
});
afterAll(() => carrier?.stop());

describe("a message whose submit timed out, while its late answer may still come", () => {
  it("is not submitted again by another job inside the late-answer window", async () => {
    const id = await carrier.send(`+${DEST}`, "answered late");
    const { pool, boss } = carrier.t.service;
    await waitFor(
      async () => {
        const { rows } = await pool.query<{ unanswered: number; locked_by: string | null }>(
          "SELECT unanswered, locked_by FROM messages WHERE id = $1",
          [id],
        );
        return rows[0]?.unanswered === 1 && rows[0]?.locked_by === null;
      },
      { timeoutMs: 10_000, what: "the timed-out try settled" },
    );
    await enqueueDispatch(boss, pool, [{ id, operator: "econet" }], 100, 0);
    await waitFor(async () => (await carrier.state(id))?.status === "success", {
      timeoutMs: 20_000,
      what: "success",
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(carrier.smsc.submitsPerDestination().get(`${DEST}#1`)).toBe(1);
  }, 40_000);
});
