/**
 * Shiri against SMSCs that speak other dialects: every simulator preset (three at a time, one per
 * operator) and a minimal SMSC written here on node-smpp's server that is not carriers/simulator.
 * Each message must end `success` with `delivered_at` (or the failed state in operator_response),
 * over real SMPP on loopback and a real database, with the ledger balanced.
 */
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import smpp, { type PDU, type Session } from "smpp";
import { afterAll, describe, expect, it } from "vitest";
import { OPERATORS, type Operator } from "../../carriers/index.ts";
import {
  type PresetName,
  type RunningSimulators,
  shiriEnvFor,
  startSimulators,
} from "../../carriers/simulator/index.ts";
import { balanceFromLedger, balanceOf } from "../../src/ledger/ledger.ts";
import { smppEnv } from "../support/dispatch.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

const NUMBERS: Record<Operator, string> = {
  econet: "+26377",
  netone: "+26371",
  telecel: "+26373",
};
const number = (op: Operator, i: number) => `${NUMBERS[op]}${String(1_000_000 + i).slice(-7)}`;

const TEXTS = {
  single: "Mhoro, your code is 4821",
  gsmLong: `Your parcel is on its way. ${"Track it with the link we sent you earlier today. ".repeat(4)}`,
  ucs2Long: `Makorokoto 🎉 ${"Tinokutendai nekushandisa Shiri 🙏🏾 ".repeat(4)}`,
};

const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function send(t: TestService, acct: TestAccount, to: string, message: string): Promise<string> {
  const res = await call(t.base, "POST", "/api/v1/sms", {
    headers: acct.headers,
    body: { to, from: "SHIRI", message },
  });
  if (res.status !== 202) throw new Error(`send failed: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

async function bulk(t: TestService, acct: TestAccount, to: string[], message: string): Promise<string[]> {
  const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
    headers: acct.headers,
    body: { to, from: "SHIRI", message },
  });
  if (res.status !== 202) throw new Error(`bulk failed: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
}

interface Row {
  id: string;
  status: string;
  operator_response: string;
  delivered: boolean;
}

async function rows(t: TestService, ids: readonly string[]): Promise<Row[]> {
  const { rows } = await t.service.pool.query<Row>(
    "SELECT id, status, operator_response, delivered_at IS NOT NULL AS delivered FROM messages WHERE id = ANY($1)",
    [ids],
  );
  return rows;
}

async function expectLedgerBalanced(t: TestService, acct: TestAccount): Promise<void> {
  const balance = await balanceOf(t.service.pool, acct.id);
  const ledger = await balanceFromLedger(t.service.pool, acct.id);
  expect([Number(balance?.available), Number(balance?.held)]).toEqual([
    Number(ledger.available),
    Number(ledger.held),
  ]);
  expect(Number(ledger.held)).toBe(0);
}

/** Single, GSM multipart, UCS-2 multipart and a small bulk to each operator; all delivered. */
async function sendEverything(t: TestService, acct: TestAccount, operators: readonly Operator[]) {
  const ids: string[] = [];
  for (const [k, op] of operators.entries()) {
    ids.push(await send(t, acct, number(op, k * 10 + 1), TEXTS.single));
    ids.push(await send(t, acct, number(op, k * 10 + 2), TEXTS.gsmLong));
    ids.push(await send(t, acct, number(op, k * 10 + 3), TEXTS.ucs2Long));
    ids.push(
      ...(await bulk(
        t,
        acct,
        [4, 5, 6].map((i) => number(op, k * 10 + i)),
        TEXTS.gsmLong,
      )),
    );
  }
  return ids;
}

async function startWithPresets(
  presets: Partial<Record<Operator, PresetName>>,
  extraEnv: Record<string, string> = {},
) {
  const operators = OPERATORS.filter((op) => presets[op] !== undefined);
  const sims: RunningSimulators = await startSimulators({
    host: "127.0.0.1",
    operators,
    perOperator: Object.fromEntries(
      // Receipts right behind each answer: most reach Shiri while the batch that submitted their
      // segment is still open, and are recorded in its settle (src/receipts/held-receipts.ts).
      operators.map((op) => [op, { port: 0, preset: presets[op], behaviour: { receiptDelayMs: 0 } }]),
    ),
  });
  stops.push(() => sims.stop());
  const dialectEnv = Object.assign({}, ...operators.map((op) => shiriEnvFor(op, presets[op] ?? "operator")));
  const t = await startTestService(smppEnv(sims.ports, { ...dialectEnv, ...extraEnv }), "all");
  stops.push(() => t.stop());
  const acct = await t.account({ balance: 1_000_000_000 });
  return { t, sims, acct, operators };
}

const GROUPS: Partial<Record<Operator, PresetName>>[] = [
  { econet: "string-ids", netone: "hex64", telecel: "base36" },
  { econet: "decimal", netone: "per-message-receipts", telecel: "tlv-only" },
  { econet: "text-only", netone: "message-payload", telecel: "intermediate" },
  { econet: "sar", netone: "late-answers", telecel: "operator" },
];

describe("simulator presets", () => {
  for (const presets of GROUPS) {
    const names = Object.entries(presets)
      .map(([op, p]) => `${op}=${p}`)
      .join(", ");
    it(`delivers every message: ${names}`, async () => {
      const { t, sims, acct, operators } = await startWithPresets(presets);
      const ids = await sendEverything(t, acct, operators);
      await waitFor(async () => (await rows(t, ids)).every((r) => r.delivered), {
        timeoutMs: 60_000,
        intervalMs: 100,
        what: `${ids.length} messages delivered (${names})`,
      });
      const all = await rows(t, ids);
      expect(all.every((r) => r.status === "success" && r.operator_response === "DELIVRD")).toBe(true);
      for (const op of operators) {
        // Every concatenated message reached the handset whole, in the dialect the SMSC wants.
        expect(
          sims
            .get(op)
            .messages()
            .every((m) => m.complete),
        ).toBe(true);
        expect(sims.get(op).rejections).toEqual([]);
      }
      await expectLedgerBalanced(t, acct);
    }, 90_000);
  }

  it("keeps the carrier's err code in operator_response for a receipt that is not DELIVRD", async () => {
    const sims = await startSimulators({
      host: "127.0.0.1",
      operators: ["econet"],
      perOperator: {
        econet: { port: 0, preset: "text-only", behaviour: { receiptDelayMs: 0, outcomes: { UNDELIV: 1 } } },
      },
    });
    stops.push(() => sims.stop());
    const t = await startTestService(smppEnv(sims.ports, shiriEnvFor("econet", "text-only")), "all");
    stops.push(() => t.stop());
    const acct = await t.account({ balance: 1_000_000_000 });
    const ids = [
      await send(t, acct, number("econet", 1), TEXTS.single),
      await send(t, acct, number("econet", 2), TEXTS.gsmLong),
    ];
    await waitFor(async () => (await rows(t, ids)).every((r) => r.operator_response.startsWith("UNDELIV")), {
      timeoutMs: 20_000,
      what: "UNDELIV receipts",
    });
    for (const r of await rows(t, ids))
      expect(r).toMatchObject({ status: "success", operator_response: "UNDELIV err:001", delivered: false });
    await expectLedgerBalanced(t, acct);
  });

  it("refuses an operator dialect Shiri is not configured for, so the mismatch shows up as rejections", async () => {
    // The sar preset's SMSC wants SAR TLVs and data_coding 1; without its settings Shiri sends a UDH.
    const sims = await startSimulators({
      host: "127.0.0.1",
      operators: ["econet"],
      perOperator: { econet: { port: 0, preset: "sar" } },
    });
    stops.push(() => sims.stop());
    const t = await startTestService(smppEnv(sims.ports, shiriEnvFor("econet", "string-ids")), "all");
    stops.push(() => t.stop());
    const acct = await t.account({ balance: 1_000_000_000 });
    const id = await send(t, acct, number("econet", 1), TEXTS.single);
    await waitFor(async () => (await rows(t, [id]))[0]?.status === "failed", { what: "the refused message" });
    expect((await rows(t, [id]))[0]?.operator_response).toBe("ESME_RINVDCS");
    await expectLedgerBalanced(t, acct);
  });
});

/**
 * A minimal SMSC that owes nothing to carriers/simulator: UUID message ids, receipts with only
 * receipted_message_id and a text layout of its own ("MSGID=… STATUS=…" is unreadable as a text,
 * so the TLVs must carry it), and requests of its own: an enquire_link and an MO message.
 */
function startForeignSmsc() {
  const accepted: { id: string; destination: string }[] = [];
  const mo: number[] = [];
  const server = smpp.createServer({}, (session: Session) => {
    session.on("error", () => session.destroy());
    session.on("pdu", (pdu: PDU) => {
      switch (pdu.command) {
        case "bind_transceiver":
          session.send(pdu.response({ system_id: "foreign" }));
          // Its own requests right after the bind: a keep-alive and a message from a handset.
          session.enquire_link({});
          session.deliver_sm(
            {
              source_addr: "263771999999",
              destination_addr: "SHIRI",
              esm_class: 0,
              data_coding: 0,
              short_message: "STOP",
            },
            (resp: PDU) => void mo.push(resp.command_status),
          );
          return;
        case "submit_sm": {
          const id = randomUUID();
          accepted.push({ id, destination: String(pdu.destination_addr) });
          session.send(pdu.response({ message_id: id }));
          setTimeout(() => {
            session.deliver_sm({
              source_addr: String(pdu.destination_addr),
              destination_addr: String(pdu.source_addr),
              esm_class: 0x04,
              data_coding: 0,
              short_message: `MSGID=${id};STATUS=0;DONE=${Date.now()}`,
              receipted_message_id: id,
              message_state: 2,
            });
          }, 10);
          return;
        }
        case "enquire_link":
          session.send(pdu.response());
          return;
        case "unbind":
          session.send(pdu.response(), () => session.close());
          return;
        default:
          if (!pdu.isResponse()) session.send(pdu.response({ command_status: 0x03 }));
      }
    });
  });
  return {
    accepted,
    mo,
    async start(): Promise<number> {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
      return (server.address() as AddressInfo).port;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("an SMSC that is not carriers/simulator", () => {
  it("gets every message delivered from its UUID ids, its MO message stored and acknowledged", async () => {
    const smsc = startForeignSmsc();
    const port = await smsc.start();
    stops.push(() => smsc.stop());
    const t = await startTestService(smppEnv({ netone: port }), "all");
    stops.push(() => t.stop());
    const acct = await t.account({ balance: 1_000_000_000 });
    const ids = await sendEverything(t, acct, ["netone"]);
    await waitFor(async () => (await rows(t, ids)).every((r) => r.delivered), {
      timeoutMs: 20_000,
      what: "delivery through the foreign SMSC",
    });
    expect(smsc.accepted.every((a) => /^[0-9a-f-]{36}$/.test(a.id))).toBe(true);
    await waitFor(() => smsc.mo.length > 0, { what: "the MO message's deliver_sm_resp" });
    expect(smsc.mo[0]).toBe(0);
    // Stored with the link it came over and the operator of the number that sent it.
    const stored = await t.service.pool.query("SELECT link, operator, source_addr, body FROM mobile_originated");
    expect(stored.rows).toContainEqual({
      link: "netone",
      operator: "econet",
      source_addr: "263771999999",
      body: "STOP",
    });
    await expectLedgerBalanced(t, acct);
  });
});
