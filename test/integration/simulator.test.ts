/**
 * The carrier simulator as the tests and the bench rely on it: what it records and reassembles,
 * how each operator's SMSC writes ids, rejections and receipt outcomes, and receipt text parsing.
 * Driven through SmppSession over loopback.
 */
import smpp, { type PDU } from "smpp";
import { afterEach, describe, expect, it } from "vitest";
import { CARRIERS, OPERATORS } from "../../carriers/index.ts";
import {
  CarrierSimulator,
  type SimulatorBehaviour,
  simulatorOptionsFor,
  startSimulators,
} from "../../carriers/simulator/index.ts";
import { overridesFromEnv } from "../../carriers/simulator/main.ts";
import { receiptText } from "../../carriers/simulator/receipt.ts";
import type { Operator } from "../../carriers/types.ts";
import { encodeGsm7, encodeUcs2, splitSegments } from "../../src/domain/segments.ts";
import { actionFor, describeStatus, STATUS } from "../../src/smpp/command-status.ts";
import { parseReceiptText } from "../../src/smpp/receipt-text.ts";
import { type DeliverSm, SmppSession, type SubmitOutcome } from "../../src/smpp/session.ts";
import { waitFor } from "../support/wait-for.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const silent = { info() {}, warn() {}, error() {}, debug() {} };

async function startSimulator(behaviour: Partial<SimulatorBehaviour> = {}) {
  const sim = new CarrierSimulator(simulatorOptionsFor("econet", { port: 0, behaviour, seed: 11 }));
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  return { sim, port };
}

async function bind(operator: Operator, port: number, onDeliverSm?: (r: DeliverSm) => void) {
  const session = new SmppSession({
    settings: { ...CARRIERS[operator].smpp, port, window_size: 10 },
    logger: silent,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    onDeliverSm,
  });
  cleanups.push(() => session.close());
  session.start();
  expect(await session.waitUntilBound(5_000)).toBe(true);
  return session;
}

function responseOf(outcome: SubmitOutcome) {
  if (outcome.kind !== "response") throw new Error(`expected a response, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** UDH with one concatenation IE: 8-bit reference (IEI 0x00) or 16-bit (IEI 0x08). */
function concatUdh(ref: number, total: number, part: number, wide = false): Buffer {
  return wide
    ? Buffer.from([0x06, 0x08, 0x04, ref >> 8, ref & 0xff, total, part])
    : Buffer.from([0x05, 0x00, 0x03, ref, total, part]);
}

describe("CarrierSimulator", () => {
  it("reassembles a 3-part UCS-2 message sent with 8-bit concatenation references", async () => {
    const { sim, port } = await startSimulator();
    const session = await bind("econet", port);
    const text = `Mhoro! Makadii? ${"Tinokutendai nekushandisa Shiri 🙏🏾 ".repeat(4)}`;
    const { encoding, parts } = splitSegments(text);
    expect(encoding).toBe("ucs2");
    expect(parts).toHaveLength(3);

    const outcomes = await Promise.all(
      parts.map((part, i) =>
        session.submit({
          source_addr: "Shiri",
          destination_addr: "263771234567",
          data_coding: 8,
          short_message: encodeUcs2(part),
          udh: concatUdh(0xa7, parts.length, i + 1),
        }),
      ),
    );

    expect(outcomes.map((o) => responseOf(o).command_status)).toEqual([0, 0, 0]);
    expect(sim.accepted.map((a) => a.concat)).toEqual(
      [1, 2, 3].map((part) => ({ ref: 0xa7, total: 3, part, by: "udh" })),
    );
    expect(sim.accepted.every((a) => a.data_coding === 8)).toBe(true);
    expect(sim.messages()).toEqual([
      {
        source_addr: "Shiri",
        destination_addr: "263771234567",
        text,
        parts: 3,
        messageIds: sim.accepted.map((a) => a.messageId),
        complete: true,
      },
    ]);
  });

  it("reassembles GSM-7 parts with 16-bit references, and counts a resent part without doubling the text", async () => {
    const { sim, port } = await startSimulator();
    const session = await bind("econet", port);
    const text = `Balance {USD} €12.50 [ok] ~ ${"Your order is on its way. ".repeat(8)}`;
    const { encoding, parts } = splitSegments(text);
    expect(encoding).toBe("gsm7");
    expect(parts.length).toBeGreaterThanOrEqual(2);

    const send = (i: number) =>
      session.submit({
        source_addr: "Shiri",
        destination_addr: "263781234567",
        data_coding: 0,
        short_message: encodeGsm7(parts[i] ?? ""),
        udh: concatUdh(0x1234, parts.length, i + 1, true),
      });
    for (const i of parts.keys()) responseOf(await send(i));
    responseOf(await send(0)); // a blind resend of part 1

    expect(sim.accepted).toHaveLength(parts.length + 1);
    expect(sim.accepted.filter((a) => a.concat?.part === 1)).toHaveLength(2);
    const [whole] = sim.messages();
    expect(whole).toMatchObject({ text, parts: parts.length, complete: true });
  });

  it("refuses listed destinations with a permanent error and accepts the rest", async () => {
    const { sim, port } = await startSimulator({ rejectDestinations: ["263770000000"] });
    const session = await bind("econet", port);
    const send = (destination_addr: string) =>
      session.submit({
        source_addr: "Shiri",
        destination_addr,
        data_coding: 0,
        short_message: encodeGsm7("hi"),
      });

    const refused = responseOf(await send("263770000000"));
    const accepted = responseOf(await send("263771111111"));

    expect(refused.command_status).toBe(STATUS.ESME_RINVDSTADR);
    expect(actionFor(refused.command_status)).toBe("fail");
    expect(describeStatus(refused.command_status)).toBe("ESME_RINVDSTADR (0x0000000b)");
    expect(accepted.command_status).toBe(0);
    expect(sim.rejections.map((r) => r.destination_addr)).toEqual(["263770000000"]);
    expect(sim.accepted.map((a) => a.destination_addr)).toEqual(["263771111111"]);
  });

  it("reports failed outcomes with their message_state and network error, and honours registered_delivery", async () => {
    const { sim, port } = await startSimulator({ outcomes: { UNDELIV: 1 }, receiptDelayMs: 5 });
    const receipts: DeliverSm[] = [];
    const session = await bind("econet", port, (r) => void receipts.push(r));
    const base = { source_addr: "Shiri", destination_addr: "263771234567", data_coding: 0 };

    responseOf(
      await session.submit({ ...base, short_message: encodeGsm7("no receipt"), registered_delivery: 0 }),
    );
    responseOf(
      await session.submit({ ...base, short_message: encodeGsm7("receipt"), registered_delivery: 1 }),
    );
    await waitFor(() => receipts.length === 1, { what: "the receipt" });

    const [receipt] = receipts;
    expect(receipt?.tlvs.message_state).toBe(5);
    expect(receipt?.tlvs.network_error_code).toEqual(Buffer.from([3, 0, 1]));
    expect(parseReceiptText(receipt?.short_message ?? "")).toMatchObject({
      stat: "UNDELIV",
      err: "001",
      dlvrd: "000",
    });
    expect(receipt?.tlvs.receipted_message_id).toBe(sim.accepted[1]?.messageId);
    expect(parseReceiptText(receipt?.short_message ?? "")?.id).toBe(sim.accepted[1]?.receiptId);
    expect(sim.receiptsSent).toHaveLength(1);
  });

  it("comes back after dropAllConnections with a new bind", async () => {
    const { sim, port } = await startSimulator();
    const session = await bind("econet", port);

    sim.dropAllConnections();

    await waitFor(() => sim.stats.binds === 2 && session.state === "bound", { what: "a rebind" });
    expect(
      responseOf(
        await session.submit({
          source_addr: "Shiri",
          destination_addr: "263771234567",
          data_coding: 0,
          short_message: encodeGsm7("x"),
        }),
      ).command_status,
    ).toBe(0);
  });

  it("runs one SMSC per operator that binds with the adapter's credentials and writes ids its own way", async () => {
    const perOperator = Object.fromEntries(
      OPERATORS.map((op) => [op, { port: 0, behaviour: { receiptDelayMs: 5 } }]),
    );
    const running = await startSimulators({ perOperator });
    cleanups.push(() => running.stop());
    // The styles carriers/simulator/index.ts assumes per operator: one number, written two ways.
    const idPatterns: Record<Operator, { resp: RegExp; receipt: RegExp; bases: [16 | 10, 16 | 10] }> = {
      econet: { resp: /^[0-9a-f]+$/, receipt: /^\d+$/, bases: [16, 10] },
      netone: { resp: /^\d+$/, receipt: /^\d+$/, bases: [10, 10] },
      telecel: { resp: /^[0-9A-F]+$/, receipt: /^[0-9A-F]{16}$/, bases: [16, 16] },
    };
    const numberOf = (id: string, base: 16 | 10) => BigInt(base === 16 ? `0x${id}` : id);

    for (const operator of OPERATORS) {
      const receipts: DeliverSm[] = [];
      const session = await bind(operator, running.ports[operator] ?? -1, (r) => void receipts.push(r));
      const outcome = responseOf(
        await session.submit({
          source_addr: "Shiri",
          destination_addr: "263731234567",
          data_coding: 0,
          short_message: encodeGsm7("hi"),
        }),
      );
      await waitFor(() => receipts.length === 1, { what: `${operator}'s receipt` });

      // receipted_message_id repeats the submit_sm_resp id (SMPP 3.4 5.3.2.12); the text has its own.
      const receiptedId = receipts[0]?.tlvs.receipted_message_id ?? "";
      const textId = parseReceiptText(receipts[0]?.short_message ?? "")?.id ?? "";
      expect(outcome.message_id).toMatch(idPatterns[operator].resp);
      expect(receiptedId).toBe(outcome.message_id);
      expect(textId).toMatch(idPatterns[operator].receipt);
      const [respBase, receiptBase] = idPatterns[operator].bases;
      expect(numberOf(textId, receiptBase)).toBe(numberOf(outcome.message_id, respBase));
      expect(running.get(operator).accepted).toHaveLength(1);
    }
  });
});

describe("simulator presets' ids", () => {
  /** One submit_sm on a plain node-smpp client; the answer's id and the receipt that follows. */
  async function submitOnce(port: number): Promise<{ answered: string; receipt: PDU }> {
    const client = smpp.connect({ host: "127.0.0.1", port });
    cleanups.push(async () => void client.destroy());
    client.on("error", () => client.destroy());
    const receipts: PDU[] = [];
    client.on("deliver_sm", (pdu: PDU) => {
      receipts.push(pdu);
      client.send(pdu.response());
    });
    const { smpp: settings } = CARRIERS.econet;
    await new Promise<void>((resolve, reject) =>
      client.bind_transceiver({ system_id: settings.system_id, password: settings.password }, (pdu: PDU) =>
        pdu.command_status === 0 ? resolve() : reject(new Error(`bind refused: ${pdu.command_status}`)),
      ),
    );
    const answered = await new Promise<string>((resolve) =>
      client.submit_sm(
        {
          destination_addr: "263771234567",
          source_addr: "SHIRI",
          registered_delivery: 1,
          short_message: "hi",
        },
        (pdu: PDU) => resolve(String(pdu.message_id)),
      ),
    );
    await waitFor(() => receipts.length === 1, { what: "the receipt" });
    return { answered, receipt: receipts[0] as PDU };
  }

  it("hex-decimal and hex-padded-upper write the receipt's id in its own style, in the text and the TLV", async () => {
    const expected = {
      "hex-decimal": { answer: /^[0-9a-f]+$/, receipt: /^[0-9]+$/, base: 10 },
      "hex-padded-upper": { answer: /^[0-9a-f]+$/, receipt: /^[0-9A-F]{16}$/, base: 16 },
    } as const;
    for (const [preset, want] of Object.entries(expected)) {
      const sim = new CarrierSimulator(
        simulatorOptionsFor("econet", {
          port: 0,
          preset: preset as keyof typeof expected,
          behaviour: { receiptDelayMs: 0 },
        }),
      );
      const { port } = await sim.start();
      cleanups.push(() => sim.stop());
      const { answered, receipt } = await submitOnce(port);
      const tlvId = String(receipt.receipted_message_id);
      const textId =
        parseReceiptText(String((receipt.short_message as { message: string }).message))?.id ?? "";
      expect(answered).toMatch(want.answer);
      expect(tlvId).toMatch(want.receipt);
      expect(textId).toBe(tlvId);
      // One number, written two ways.
      expect(BigInt(want.base === 16 ? `0x${tlvId}` : tlvId)).toBe(BigInt(`0x${answered}`));
    }
  });
});

describe("receipt text", () => {
  const at = new Date(Date.UTC(2025, 0, 31, 12, 5));

  it("round-trips what the simulator writes", () => {
    const text = receiptText({
      id: "0000ABC123",
      stat: "EXPIRED",
      submittedAt: at,
      doneAt: at,
      text: "Hello {world}",
    });
    expect(text).toBe(
      "id:0000ABC123 sub:001 dlvrd:000 submit date:2501311205 done date:2501311205 stat:EXPIRED err:027 text:Hello ?world?",
    );
    expect(parseReceiptText(text)).toEqual({
      id: "0000ABC123",
      sub: "001",
      dlvrd: "000",
      submitDate: "2501311205",
      doneDate: "2501311205",
      stat: "EXPIRED",
      err: "027",
      text: "Hello ?world?",
    });
  });

  it("tolerates other orders, cases, separators, long state names and missing fields", () => {
    expect(parseReceiptText("Stat:delivered ID:99 Err:0 Submit_Date:2501311205 text:")).toMatchObject({
      id: "99",
      stat: "DELIVRD",
      err: "0",
      submitDate: "2501311205",
      doneDate: null,
      sub: null,
      text: "",
    });
    expect(parseReceiptText("id:7 stat:UNDELIV")).toMatchObject({ id: "7", stat: "UNDELIV", err: null });
  });

  it("does not let the echoed text override real fields", () => {
    expect(parseReceiptText("id:1 stat:DELIVRD err:000 text:see id:2 stat:REJECTD")).toMatchObject({
      id: "1",
      stat: "DELIVRD",
      text: "see id:2 stat:REJECTD",
    });
  });

  it("returns null for text that is not a receipt", () => {
    expect(parseReceiptText("Hello, are you there?")).toBeNull();
  });
});

describe("simulator environment", () => {
  it("reads ports and behaviour per operator", () => {
    const env = {
      SIM_ECONET_PORT: "0",
      SIM_ECONET_RECEIPT_DELAY_MS: "50",
      SIM_ECONET_TPS_LIMIT: "100",
      SIM_ECONET_OUTCOMES: "DELIVRD=90, UNDELIV=10",
      SIM_NETONE_DROP_RATE: "0.01",
    };
    expect(overridesFromEnv("econet", env)).toEqual({
      port: 0,
      behaviour: { receiptDelayMs: 50, tpsLimit: 100, outcomes: { DELIVRD: 90, UNDELIV: 10 } },
    });
    expect(overridesFromEnv("netone", env)).toEqual({ behaviour: { dropRate: 0.01 } });
    expect(overridesFromEnv("telecel", env)).toEqual({ behaviour: {} });
  });

  it("refuses values it cannot use", () => {
    expect(() => overridesFromEnv("econet", { SIM_ECONET_TPS_LIMIT: "fast" })).toThrow(
      /SIM_ECONET_TPS_LIMIT/,
    );
    expect(() => overridesFromEnv("econet", { SIM_ECONET_OUTCOMES: "LOST=1" })).toThrow(
      /unknown receipt state/,
    );
  });
});
