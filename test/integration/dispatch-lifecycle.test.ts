import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

let h: DispatchHarness;

beforeAll(async () => {
  h = await startDispatchHarness({
    behaviour: {
      econet: { rejectDestinations: ["263779999999"] },
      telecel: { outcomes: { DELIVRD: 1 } },
      netone: { outcomes: { DELIVRD: 1 } },
    },
  });
});
afterAll(() => h.stop());

describe("a message's life through the carrier", () => {
  it("goes enqueued → success with operator_response and delivered_at, and the hold is captured", async () => {
    const id = await h.send("+263771234567", "Mhoro, uri sei?");
    await h.waitUntilSettled([id], { delivered: true });
    const res = await call(h.t.base, "GET", `/api/v1/sms/${id}`, { headers: h.acct.headers });
    const m = (res.body as { data: Record<string, unknown> }).data;
    expect(m.status).toBe("success");
    expect(m.operator_response).toBe("DELIVRD");
    expect(typeof m.delivered_at).toBe("string");
    const { rows } = await h.pool.query("SELECT billing FROM messages WHERE id = $1", [id]);
    expect(rows[0]).toEqual({ billing: "captured" });
    const sim = h.sims.get("econet");
    const submitted = sim.accepted.filter((a) => a.text === "Mhoro, uri sei?");
    expect(submitted).toHaveLength(1);
    expect(submitted[0]).toMatchObject({
      destination_addr: "263771234567",
      source_addr: "SHIRI",
      data_coding: 0,
    });
  });

  it("serves all three operators at once, each over its own session", async () => {
    const ids = await h.bulk(
      ["+263771000001", "+263711000001", "+263731000001", "+263781000001"],
      "three ways",
    );
    await h.waitUntilSettled(ids, { delivered: true });
    const states = await h.statusOf(ids);
    for (const id of ids) expect(states.get(id)).toMatchObject({ status: "success", delivered: true });
    expect(h.sims.get("econet").accepted.filter((a) => a.text === "three ways")).toHaveLength(2);
    expect(h.sims.get("netone").accepted.filter((a) => a.text === "three ways")).toHaveLength(1);
    expect(h.sims.get("telecel").accepted.filter((a) => a.text === "three ways")).toHaveLength(1);
  });

  it("sends a multi-part UCS-2 message as concatenated parts the carrier reassembles, delivered when every part is", async () => {
    const text = `Makorokoto! 🎉 ${"Tinokutendai nekushandisa Shiri. ".repeat(5)}`;
    const id = await h.send("+263731234567", text);
    await h.waitUntilSettled([id], { delivered: true });
    const whole = h.sims
      .get("telecel")
      .messages()
      .find((m) => m.text === text);
    expect(whole?.complete).toBe(true);
    expect(whole?.parts).toBeGreaterThan(2);
    const parts = await h.pool.query<{ part_no: number; smsc_id: string; receipt_state: string }>(
      "SELECT part_no, smsc_id, receipt_state FROM message_parts WHERE message_id = $1 ORDER BY part_no",
      [id],
    );
    expect(parts.rows).toHaveLength(whole?.parts ?? -1);
    expect(new Set(parts.rows.map((p) => p.smsc_id)).size).toBe(parts.rows.length);
    for (const p of parts.rows) expect(p.receipt_state).toBe("DELIVRD");
    const accepted = h.sims.get("telecel").accepted.filter((a) => whole?.messageIds.includes(a.messageId));
    for (const a of accepted) expect(a.data_coding).toBe(8);
  });

  it("fails a permanently refused message and releases its hold", async () => {
    const before = await balanceNow(h.pool, h.acct.id);
    const id = await h.send("+263779999999", "refused");
    await h.waitUntilSettled([id]);
    const res = await call(h.t.base, "GET", `/api/v1/sms/${id}`, { headers: h.acct.headers });
    expect((res.body as { data: Record<string, unknown> }).data).toMatchObject({
      status: "failed",
      operator_response: "ESME_RINVDSTADR",
      delivered_at: null,
    });
    await waitFor(async () => (await balanceNow(h.pool, h.acct.id))?.held === before?.held, {
      what: "the hold to be released",
    });
    expect((await balanceNow(h.pool, h.acct.id))?.available).toBe(before?.available);
  });

  it("keeps success but reports a non-delivered final receipt in operator_response", async () => {
    h.sims.get("netone").setBehaviour({ outcomes: { UNDELIV: 1 } });
    try {
      const id = await h.send("+263711234567", "nobody home");
      await waitFor(
        async () => /^UNDELIV( err:\d+)?$/.test((await h.statusOf([id])).get(id)?.operator_response ?? ""),
        {
          timeoutMs: 10_000,
          what: "the UNDELIV receipt",
        },
      );
      expect((await h.statusOf([id])).get(id)).toMatchObject({ status: "success", delivered: false });
    } finally {
      h.sims.get("netone").setBehaviour({ outcomes: { DELIVRD: 1 } });
    }
  });

  it("balances the ledger: what the ledger rows say equals the running balance", async () => {
    await expectLedgerBalanced(h.pool, h.acct.id);
  });
});
