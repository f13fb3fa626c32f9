import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { smppEnv } from "../support/dispatch.ts";
import { type ForeignSmsc, startForeignSmsc } from "../support/foreign-smsc.ts";
import { startTestService, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * shiri_receipts_total is labelled by the receipt's state. A carrier writes what it likes after
 * `stat:`; a label value per oddity would grow the metric's series without bound, so a state SMPP
 * 3.4 does not name counts as OTHER.
 */
let smsc: ForeignSmsc;
let t: TestService;

beforeAll(async () => {
  smsc = startForeignSmsc();
  const port = await smsc.start();
  t = await startTestService(smppEnv({ econet: port }), "all");
  await waitFor(async () => smsc.boundSessions() > 0, { timeoutMs: 20_000, what: "the econet link bound" });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await smsc?.stop();
});

async function receiptStates(): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${t.service.metricsPort}/metrics`)).text();
  const states = new Map<string, number>();
  for (const m of text.matchAll(/^shiri_receipts_total\{[^}]*state="([^"]*)"[^}]*\} (\S+)$/gm))
    states.set(m[1] ?? "", Number(m[2]));
  return states;
}

describe("receipt states as metric labels", () => {
  it("counts states SMPP 3.4 does not name as OTHER, one series however many there are", async () => {
    const odd = ["ZZKE768NT1", "ZZQ0W19X2C", "delivered-ish"];
    for (const [i, stat] of odd.entries())
      expect(await smsc.sendReceipt({ id: `odd${i}`, stat, handset: "263771000001" })).toBe(0);
    expect(await smsc.sendReceipt({ id: "named", stat: "UNDELIV", handset: "263771000001" })).toBe(0);
    await waitFor(async () => ((await receiptStates()).get("OTHER") ?? 0) >= odd.length, {
      timeoutMs: 10_000,
      what: "the odd receipts counted",
    });
    const states = await receiptStates();
    expect(states.get("OTHER")).toBe(odd.length);
    expect(states.get("UNDELIV")).toBe(1);
    for (const stat of odd) expect(states.has(stat.toUpperCase())).toBe(false);
  }, 60_000);
});
