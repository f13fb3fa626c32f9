/**
 * `shiri carrier check`'s work over loopback SMPP: a bind reported with what the SMSC answered, a
 * refused bind reported as refused, and one message whose answer and receipt ids are reported
 * with how Shiri matches them, against an SMSC that is not carriers/simulator.
 */
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { checkCarrier } from "../../src/dispatch/carrier-check.ts";
import { createLogger } from "../../src/logger.ts";
import { type ForeignSmscOptions, startForeignSmsc } from "../support/foreign-smsc.ts";

const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function smscAt(options: ForeignSmscOptions) {
  const smsc = startForeignSmsc({ name: "foreign-check", ...options });
  const port = await smsc.start();
  stops.push(() => smsc.stop());
  return { smsc, port };
}

function check(port: number, to?: string) {
  const settings = loadConfig({ SMPP_ECONET_PORT: String(port), SMPP_ECONET_HOST: "127.0.0.1" }).links.econet;
  if (!settings) throw new Error("no econet link");
  return checkCarrier({
    link: "econet",
    settings,
    logger: createLogger("silent"),
    from: "SHIRI",
    bindTimeoutMs: 3_000,
    receiptTimeoutMs: 5_000,
    ...(to !== undefined ? { to } : {}),
  });
}

describe("carrier check", () => {
  it("reports the bind and what the SMSC answered it with", async () => {
    const { port } = await smscAt({});
    const report = await check(port);
    expect(report).toMatchObject({ link: "econet", port, bound: true, bind_error: null });
    expect(report.negotiated?.system_id).toBe("foreign-check");
    expect(report.message).toBeUndefined();
  });

  it("reports a refused bind", async () => {
    const { port } = await smscAt({ refuseBinds: true });
    const report = await check(port);
    expect(report.bound).toBe(false);
    expect(report.bind_error).toMatch(/ESME_RBINDFAIL/);
  });

  it("sends one message and says how the receipt's id names the answer's: hex answered, decimal receipted", async () => {
    const { smsc, port } = await smscAt({
      ids: { answer: "hex-upper", receipt: "decimal" },
      receiptIdIn: "text",
    });
    const report = await check(port, "+263771234567");
    expect(smsc.submits).toHaveLength(1);
    const submit = smsc.submits[0];
    expect(report.message).toEqual({
      to: "+263771234567",
      submit_status: expect.stringMatching(/^ESME_ROK/),
      answer_id: submit?.answeredId,
      receipt: { tlv_id: null, text_id: submit?.receiptId, state: "DELIVRD" },
      matched: "hex_to_decimal",
    });
  });

  it("says exact for an opaque id written the same in both", async () => {
    const { port } = await smscAt({ ids: { answer: "base36", receipt: "base36" } });
    expect((await check(port, "+263771234567")).message?.matched).toBe("exact");
  });
});
