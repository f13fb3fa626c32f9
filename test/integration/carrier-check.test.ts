/**
 * `shiri carrier check`'s work over loopback SMPP: a bind reported with what the SMSC answered, a
 * refused bind reported as refused, and one message whose answer and receipt ids are reported
 * with how Shiri matches them, against an SMSC that is not carriers/simulator. On a live link's
 * account the SMSC hands the check's bind other deliver_sm too: it takes only its own receipt and
 * refuses the rest for the SMSC to deliver again, to a worker's bind, where they are stored.
 */
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { checkCarrier } from "../../src/dispatch/carrier-check.ts";
import { createLogger } from "../../src/logger.ts";
import { STATUS } from "../../src/smpp/command-status.ts";
import { type ForeignSmscOptions, startForeignSmsc } from "../support/foreign-smsc.ts";
import { waitFor } from "../support/wait-for.ts";

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

function check(port: number, to?: string, signal?: AbortSignal) {
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
    ...(signal !== undefined ? { signal } : {}),
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

  it("binds as a transmitter without --to, so the SMSC hands it no deliver_sm", async () => {
    const { smsc, port } = await smscAt({});
    expect((await check(port)).bound).toBe(true);
    expect(smsc.bindCommands).toEqual(["bind_transmitter"]);
  });

  it("reports a refused bind", async () => {
    const { port } = await smscAt({ refuseBinds: true });
    const report = await check(port);
    expect(report.bound).toBe(false);
    expect(report.bind_error).toMatch(/^bind_transmitter refused: ESME_RBINDFAIL/);
  });

  it("says why it could not connect", async () => {
    const { port, smsc } = await smscAt({});
    await smsc.stop(); // nothing listens there any more
    const report = await check(port);
    expect(report.bound).toBe(false);
    expect(report.bind_error).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`);
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
      others_refused: 0,
    });
  });

  it("says exact for an opaque id written the same in both", async () => {
    const { port } = await smscAt({ ids: { answer: "base36", receipt: "base36" } });
    expect((await check(port, "+263771234567")).message?.matched).toBe("exact");
  });

  it("refuses a handset's message and another message's receipt for the SMSC to deliver again, and reports its own receipt", async () => {
    const { smsc, port } = await smscAt({
      ids: { answer: "base36", receipt: "base36" },
      receiptDelayMs: 1_500,
    });
    const running = check(port, "+263771234567");
    // Once the check is bound and waiting for its receipt, the SMSC hands its bind other traffic
    // of the account: a handset's message (esm_class 0) and another message's final receipt.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const handsetMessage = await smsc.sendReceipt({
      id: "x",
      stat: "x",
      handset: "263771111111",
      esmClass: 0,
    });
    const otherReceipt = await smsc.sendReceipt({
      id: "someoneelse1",
      stat: "UNDELIV",
      handset: "263772222222",
    });
    const report = await running;
    // ESME_RX_T_APPN: stored nowhere by the check, so not acknowledged; the SMSC retries them.
    expect(handsetMessage).toBe(STATUS.ESME_RX_T_APPN);
    expect(otherReceipt).toBe(STATUS.ESME_RX_T_APPN);
    expect(smsc.bindCommands).toEqual(["bind_transceiver"]);
    const submit = smsc.submits[0];
    expect(report.message).toEqual({
      to: "+263771234567",
      submit_status: expect.stringMatching(/^ESME_ROK/),
      answer_id: submit?.answeredId,
      receipt: { tlv_id: submit?.receiptId, text_id: submit?.receiptId, state: "DELIVRD" },
      matched: "exact",
      others_refused: 2,
    });
    // Its own receipt was acknowledged: nothing is owed for it.
    expect(smsc.receipts.map((r) => r.commandStatus)).toEqual([STATUS.ESME_ROK]);
  });

  it("stops waiting for its receipt when told to stop (the operator's Ctrl-C), and unbinds", async () => {
    const { smsc, port } = await smscAt({ script: () => ({ receipt: false }) });
    const stop = new AbortController();
    const running = check(port, "+263771234567", stop.signal);
    await waitFor(() => smsc.submits.length === 1, { what: "the check's submit" });
    const stoppedAt = Date.now();
    stop.abort();
    const report = await running;
    // Well before its 5 s wait for the receipt.
    expect(Date.now() - stoppedAt).toBeLessThan(2_000);
    expect(report.message).toMatchObject({ matched: "no_receipt" });
    await waitFor(() => smsc.boundSessions() === 0, { what: "the check's bind to end" });
  });

  it("takes its own receipt that overtook the answer once the answer names it", async () => {
    const { smsc, port } = await smscAt({ script: () => ({ answerAfterReceiptMs: 300 }) });
    const report = await check(port, "+263771234567");
    expect(report.message).toMatchObject({ matched: "exact", others_refused: 0 });
    expect(smsc.receipts.map((r) => r.commandStatus)).toEqual([STATUS.ESME_ROK]);
  });
});
