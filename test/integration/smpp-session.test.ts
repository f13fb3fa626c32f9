/**
 * SmppSession against a real simulated SMSC over loopback: binding, the window, timeouts, lost
 * connections, throttling, receipts and enquire_link. Nothing on the wire is mocked.
 */
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import smpp, { type PDU, type Session } from "smpp";
import { afterEach, describe, expect, it } from "vitest";
import { CARRIERS } from "../../carriers/index.ts";
import {
  CarrierSimulator,
  type SimulatorBehaviour,
  simulatorOptionsFor,
} from "../../carriers/simulator/index.ts";
import type { SmppSettings } from "../../carriers/types.ts";
import { CarrierLink } from "../../src/dispatch/carrier-link.ts";
import { encodeGsm7 } from "../../src/domain/segments.ts";
import { canonicalSmscId } from "../../src/domain/smsc-id.ts";
import { createLogger } from "../../src/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { actionFor, STATUS } from "../../src/smpp/command-status.ts";
import { parseReceiptText } from "../../src/smpp/receipt-text.ts";
import {
  type DeliverSm,
  type SessionState,
  SmppSession,
  type SmppSessionOptions,
  type SubmitOutcome,
} from "../../src/smpp/session.ts";
import { waitFor } from "../support/wait-for.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface LogEntry {
  level: string;
  obj: object;
  msg: string;
}

function captureLogger() {
  const entries: LogEntry[] = [];
  const at = (level: string) => (obj: object, msg: string) => void entries.push({ level, obj, msg });
  return { entries, logger: { info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") } };
}

async function startSimulator(behaviour: Partial<SimulatorBehaviour> = {}) {
  const sim = new CarrierSimulator(simulatorOptionsFor("econet", { port: 0, behaviour, seed: 7 }));
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  return { sim, port };
}

function startSession(
  port: number,
  settings: Partial<SmppSettings> = {},
  options: Partial<Omit<SmppSessionOptions, "settings" | "logger">> = {},
) {
  const { entries, logger } = captureLogger();
  const states: SessionState[] = [];
  const linkEvents: string[] = [];
  const session = new SmppSession({
    settings: {
      ...CARRIERS.econet.smpp,
      port,
      enquire_link_interval_ms: 60_000,
      response_timeout_ms: 2_000,
      ...settings,
    },
    logger,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    onStateChange: (state) => states.push(state),
    onLinkEvent: (event, reason) => linkEvents.push(`${event}:${reason}`),
    ...options,
  });
  cleanups.push(() => session.close());
  session.start();
  return { session, states, linkEvents, logs: entries };
}

async function boundSession(...args: Parameters<typeof startSession>) {
  const started = startSession(...args);
  expect(await started.session.waitUntilBound(5_000)).toBe(true);
  return started;
}

const message = (text: string, destination = "263771234567") => ({
  source_addr: "Shiri",
  destination_addr: destination,
  data_coding: 0,
  short_message: encodeGsm7(text),
});

function responseOf(outcome: SubmitOutcome) {
  if (outcome.kind !== "response") throw new Error(`expected a response, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe("SmppSession", () => {
  it("binds and submits; the id comes back in the carrier's submit_sm_resp format", async () => {
    const { sim, port } = await startSimulator();
    const { session, states, logs } = await boundSession(port);

    const outcome = responseOf(await session.submit(message("hello")));

    expect(outcome.command_status).toBe(STATUS.ESME_ROK);
    expect(outcome.message_id).toMatch(/^[0-9a-f]+$/); // Econet answers in hex
    expect(sim.accepted).toHaveLength(1);
    const [accepted] = sim.accepted;
    expect(accepted).toMatchObject({
      messageId: outcome.message_id,
      destination_addr: "263771234567",
      source_addr: "Shiri",
      data_coding: 0,
      text: "hello",
      concat: null,
    });
    expect(canonicalSmscId(outcome.message_id, "hex")).toBe(
      canonicalSmscId(accepted?.receiptId ?? "", "decimal"),
    );
    expect(states).toEqual(["connecting", "bound"]);
    expect(JSON.stringify(logs)).not.toContain(CARRIERS.econet.smpp.password);
  });

  it("never has more submits outstanding than the window", async () => {
    const { sim, port } = await startSimulator({ submitLatencyMs: 20 });
    const { session } = await boundSession(port, { window_size: 4 });

    const batch = Array.from({ length: 30 }, (_, i) => session.submit(message(`window ${i}`)));
    expect(session.inFlight).toBeLessThanOrEqual(4);
    const outcomes = await Promise.all(batch);

    expect(outcomes.every((o) => o.kind === "response" && o.command_status === 0)).toBe(true);
    expect(sim.stats.maxOutstanding).toBeLessThanOrEqual(4);
    expect(sim.stats.maxOutstanding).toBeGreaterThanOrEqual(2);
    expect(session.inFlight).toBe(0);
  });

  it("resolves a submit with no response in time as unknown/timeout, its slot kept until the window ends", async () => {
    const { port } = await startSimulator({ submitLatencyMs: 10_000 });
    const { session, logs } = await boundSession(port, { response_timeout_ms: 100 });

    const outcome = await session.submit(message("slow"));
    expect(outcome).toMatchObject({ kind: "unknown", reason: "timeout" });
    // Still outstanding at the SMSC, which may answer it yet: it keeps its window slot.
    expect(session.inFlight).toBe(1);
    expect(session.state).toBe("bound");
    expect(logs.some((l) => l.level === "error")).toBe(false);
    // No answer within the late-answer window (3 × the timeout): nothing heard, the slot freed.
    if (outcome.kind === "unknown" && outcome.reason === "timeout") expect(await outcome.late).toBeNull();
    expect(session.inFlight).toBe(0);
  });

  it("never has more submits outstanding than the window, when the SMSC answers after the timeout", async () => {
    // Every answer 250 ms after its submit: past the 100 ms timeout, inside the 300 ms late window.
    const { sim, port } = await startSimulator({ submitLatencyMs: 250 });
    const { session } = await boundSession(port, { window_size: 4, response_timeout_ms: 100 });

    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => session.submit(message(`slow ${i}`))),
    );
    const late = await Promise.all(
      outcomes.map((o) => (o.kind === "unknown" && o.reason === "timeout" ? o.late : null)),
    );

    expect(late.every((answer) => answer?.command_status === 0)).toBe(true);
    // Before, a slot was freed at the timeout: the SMSC held up to 3 × the window.
    expect(sim.stats.maxOutstanding).toBeLessThanOrEqual(4);
    expect(session.inFlight).toBe(0);
  });

  it("hands over an answer that comes after the timeout, within the late-answer window", async () => {
    const { port } = await startSimulator({ submitLatencyMs: 200 });
    const { session } = await boundSession(port, { response_timeout_ms: 100 });

    const outcome = await session.submit(message("late"));
    expect(outcome).toMatchObject({ kind: "unknown", reason: "timeout" });
    if (outcome.kind !== "unknown" || outcome.reason !== "timeout") throw new Error("expected a timeout");
    const late = await outcome.late;
    expect(late?.command_status).toBe(0);
    expect(late?.message_id).toMatch(/\S/);
  });

  it("names the submit by its caller's ref in the warnings about an answer that came late", async () => {
    const { port } = await startSimulator({ submitLatencyMs: 500 });
    const { session, logs } = await boundSession(
      port,
      { response_timeout_ms: 100 },
      { lateAnswerWindowMs: 100 },
    );

    const outcome = await session.submit(message("too late"), { ref: "message 0190-abc part 2" });
    if (outcome.kind !== "unknown" || outcome.reason !== "timeout") throw new Error("expected a timeout");
    expect(await outcome.late).toBeNull();

    await waitFor(() => logs.some((l) => l.msg === "response to no pending request"), {
      what: "the answer past the window",
    });
    const line = logs.find((l) => l.msg === "response to no pending request");
    expect(line?.level).toBe("warn");
    expect(line?.obj).toMatchObject({
      command: "submit_sm_resp",
      sequence_number: expect.any(Number),
      status: "ESME_ROK (0x00000000)",
      message_id: expect.stringMatching(/\S/),
      past_late_answer_window: true,
      ref: "message 0190-abc part 2",
      answered_after_ms: expect.any(Number),
      response_timeout_ms: 100,
      late_answer_window_ms: 100,
    });
    // Past the 100 ms timeout and the 100 ms window after it.
    const after = (line?.obj as { answered_after_ms?: number } | undefined)?.answered_after_ms ?? 0;
    expect(after).toBeGreaterThanOrEqual(200);
  });

  it("settles submits lost with the connection as connection_lost, rebinds, then submits again", async () => {
    const { sim, port } = await startSimulator({ submitLatencyMs: 50, dropAfterSubmits: 5 });
    const { session, states } = await boundSession(port, { window_size: 10 });

    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => session.submit(message(`lost ${i}`))),
    );

    const lost = outcomes.filter((o) => o.kind === "unknown" && o.reason === "connection_lost");
    expect(lost.length).toBeGreaterThanOrEqual(5);
    expect(
      outcomes.every(
        (o) => o.kind === "not_sent" || (o.kind === "unknown" && o.reason === "connection_lost"),
      ),
    ).toBe(true);
    expect(sim.accepted).toHaveLength(0);

    sim.setBehaviour({ dropAfterSubmits: null });
    await waitFor(() => sim.stats.binds >= 2 && session.state === "bound", { what: "a second bind" });
    expect(responseOf(await session.submit(message("after"))).command_status).toBe(0);
    expect(states).toEqual(["connecting", "bound", "disconnected", "connecting", "bound"]);
  });

  it("gets ESME_RTHROTTLED from the carrier above its TPS limit", async () => {
    const { sim, port } = await startSimulator({ tpsLimit: 5 });
    const { session } = await boundSession(port, { window_size: 20 });

    const outcomes = await Promise.all(
      Array.from({ length: 15 }, (_, i) => session.submit(message(`tps ${i}`))),
    );
    const statuses = outcomes.map((o) => responseOf(o).command_status);

    expect(statuses.filter((s) => s === STATUS.ESME_RTHROTTLED).length).toBeGreaterThan(0);
    expect(actionFor(STATUS.ESME_RTHROTTLED)).toBe("backoff");
    // Within any one second the carrier accepted at most its limit.
    const times = sim.accepted.map((a) => a.at.getTime());
    for (const t of times) expect(times.filter((u) => u >= t && u < t + 1_000).length).toBeLessThanOrEqual(5);
  });

  it("after a throttle, holds one submit unanswered at the SMSC until one is accepted, then grows back", async () => {
    const { sim, port } = await startSimulator({ tpsLimit: 5, submitLatencyMs: 20 });
    const { session, logs } = await boundSession(
      port,
      { window_size: 10 },
      { throttle: { initialDelayMs: 50, maxDelayMs: 200 } },
    );
    const burst = (tag: string) =>
      Promise.all(Array.from({ length: 10 }, (_, i) => session.submit(message(`${tag} ${i}`))));
    const statusesOf = (outcomes: SubmitOutcome[]) => outcomes.map((o) => responseOf(o).command_status);

    // The full window goes; the carrier takes 5 and throttles the rest: the window drops to one.
    const first = statusesOf(await burst("first"));
    expect(first.filter((s) => s === STATUS.ESME_ROK)).toHaveLength(5);
    expect(session.effectiveWindow).toBe(1);
    const cuts = logs.filter((l) => l.level === "warn" && "windowWas" in l.obj);
    expect(cuts).toHaveLength(1); // once for the burst's five throttles, not once a submit
    expect(cuts[0]?.obj).toMatchObject({ window: 1, windowWas: 10 });

    // While the carrier throttles everything, ten submits queue for the one slot: each goes
    // alone, after the pause its predecessor's throttle began, and none is lost.
    sim.setBehaviour({ tpsLimit: 0, rejectRate: 1, rejectStatus: STATUS.ESME_RTHROTTLED });
    sim.stats.maxOutstanding = 0;
    const throttledBefore = sim.rejections.length;
    const second = statusesOf(await burst("second"));
    expect(second).toEqual(Array(10).fill(STATUS.ESME_RTHROTTLED));
    expect(sim.stats.maxOutstanding).toBe(1);
    // Apart by the 20 ms latency and a pause of at least half initialDelayMs (50): a waiter handed
    // the slot during a pause waits for its end. Without that wait they would be 20 ms apart.
    const times = sim.rejections.slice(throttledBefore).map((r) => r.at.getTime());
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(20 + 50 / 2);
    expect(session.effectiveWindow).toBe(1);

    // Accepting again: one more unanswered submit per accepted answer, back to window_size.
    sim.setBehaviour({ rejectRate: 0 });
    const third = statusesOf(await burst("third"));
    expect(third).toEqual(Array(10).fill(STATUS.ESME_ROK));
    expect(sim.stats.maxOutstanding).toBeGreaterThan(1);
    expect(session.effectiveWindow).toBe(10);
    expect(logs.filter((l) => l.msg.includes("back to window_size"))).toHaveLength(1);
    expect(session.inFlight).toBe(0);
  });

  it("after a throttle, a submit that times out does not hold the cut window until its late answer", async () => {
    const { sim, port } = await startSimulator({ rejectRate: 1, rejectStatus: STATUS.ESME_RTHROTTLED });
    const { session } = await boundSession(
      port,
      { window_size: 2, response_timeout_ms: 100 },
      { throttle: { initialDelayMs: 20, maxDelayMs: 40 }, lateAnswerWindowMs: 3_000 },
    );
    expect(responseOf(await session.submit(message("throttled"))).command_status).toBe(
      STATUS.ESME_RTHROTTLED,
    );
    expect(session.effectiveWindow).toBe(1);

    // The carrier takes the next submit and never answers it; three more queue behind it. They are
    // made once it is on the wire, so that it, not one of them, is the one left unanswered.
    sim.setBehaviour({ rejectRate: 0, unansweredRate: 1 });
    sim.stats.maxOutstanding = 0;
    const started = Date.now();
    const silent = session.submit(message("silent"));
    await waitFor(() => sim.unanswered.length === 1, { what: "the silent submit" });
    sim.setBehaviour({ unansweredRate: 0 });
    const after = Array.from({ length: 3 }, (_, i) => session.submit(message(`after ${i}`)));
    expect(await silent).toMatchObject({ kind: "unknown", reason: "timeout" });

    // Its slot, kept for a late answer, counts against window_size, not the cut window: the others
    // go at its timeout, not when the 3 s late-answer window ends.
    expect((await Promise.all(after)).map((o) => responseOf(o).command_status)).toEqual([0, 0, 0]);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(session.effectiveWindow).toBe(2);
    // The simulator's count leaves out the submit it never answers: besides it, one at a time.
    // The session still holds the silent one's slot (window_size bounds both together).
    expect(sim.stats.maxOutstanding).toBe(1);
    expect(session.inFlight).toBe(1);
  });

  it("takes a generic_nack saying ESME_RTHROTTLED as throttling: it pauses and cuts the window", async () => {
    const { sim, port } = await startSimulator({
      genericNackRate: 1,
      genericNackStatus: STATUS.ESME_RTHROTTLED,
    });
    const { session, logs } = await boundSession(
      port,
      { window_size: 10 },
      { throttle: { initialDelayMs: 400, maxDelayMs: 800 } },
    );

    const nacked = responseOf(await session.submit(message("nacked")));
    expect(nacked.command_status).toBe(STATUS.ESME_RTHROTTLED);
    expect(session.effectiveWindow).toBe(1);
    expect(logs.find((l) => l.msg === "carrier throttling; pausing submits")?.obj).toMatchObject({
      window: 1,
      windowWas: 10,
    });

    // The next submit waits out the pause, at least half initialDelayMs, and grows the window.
    sim.setBehaviour({ genericNackRate: 0 });
    expect(responseOf(await session.submit(message("after"))).command_status).toBe(STATUS.ESME_ROK);
    const nackedAt = sim.nacked[0]?.at.getTime() ?? Number.NaN;
    const acceptedAt = sim.accepted[0]?.at.getTime() ?? Number.NaN;
    expect(acceptedAt - nackedAt).toBeGreaterThanOrEqual(200);
    expect(session.effectiveWindow).toBe(2);
  });

  it("counts a late answer as one in time: a late throttle cuts the window, a late acceptance grows it", async () => {
    // Every answer 200 ms after its submit: past the 100 ms timeout, inside the 300 ms late window.
    const { sim, port } = await startSimulator({
      submitLatencyMs: 200,
      rejectRate: 1,
      rejectStatus: STATUS.ESME_RTHROTTLED,
    });
    const { session, logs } = await boundSession(
      port,
      { window_size: 10, response_timeout_ms: 100 },
      { throttle: { initialDelayMs: 20, maxDelayMs: 40 } },
    );
    const lateAnswerTo = async (text: string) => {
      const outcome = await session.submit(message(text));
      if (outcome.kind !== "unknown" || outcome.reason !== "timeout") throw new Error("expected a timeout");
      return outcome.late;
    };

    expect((await lateAnswerTo("late throttle"))?.command_status).toBe(STATUS.ESME_RTHROTTLED);
    expect(session.effectiveWindow).toBe(1);
    expect(logs.some((l) => l.msg === "carrier throttling; pausing submits")).toBe(true);

    sim.setBehaviour({ rejectRate: 0 });
    expect((await lateAnswerTo("late acceptance"))?.command_status).toBe(STATUS.ESME_ROK);
    expect(session.effectiveWindow).toBe(2);
  });

  it("awaits the rate limiter once per submit_sm, holding its window slot, right before the write", async () => {
    const { sim, port } = await startSimulator();
    const calls: string[] = [];
    const answered: string[] = [];
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const pacer = {
      acquire: async () => {
        const n = `pdu${calls.length}`;
        calls.push(n);
        await gate;
        return () => void answered.push(n);
      },
    };
    const { session } = await boundSession(port, {}, { pacer });

    const batch = [session.submit(message("a")), session.submit(message("b")), session.submit(message("c"))];
    await waitFor(() => calls.length === 3, { what: "three acquire calls" });
    expect(session.inFlight).toBe(3);
    expect(sim.accepted).toHaveLength(0); // nothing written before its token
    open();
    expect((await Promise.all(batch)).map((o) => o.kind)).toEqual(["response", "response", "response"]);
    expect(calls).toHaveLength(3);
    expect(answered.sort()).toEqual(["pdu0", "pdu1", "pdu2"]); // each slot told when its PDU was answered
    expect(sim.accepted).toHaveLength(3);
  });

  describe("receipts", () => {
    it("reach onDeliverSm with the receipt TLVs, and the text parses", async () => {
      const { sim, port } = await startSimulator({ receiptDelayMs: 10 });
      const receipts: DeliverSm[] = [];
      const { session } = await boundSession(port, {}, { onDeliverSm: (r) => void receipts.push(r) });

      const outcome = responseOf(await session.submit(message("with receipt")));
      await waitFor(() => receipts.length === 1, { what: "the receipt" });

      const [receipt] = receipts;
      expect(receipt?.isReceipt).toBe(true);
      expect(receipt?.esm_class).toBe(0x04);
      expect(receipt?.source_addr).toBe("263771234567");
      expect(receipt?.destination_addr).toBe("Shiri");
      expect(receipt?.tlvs.message_state).toBe(2);
      // receipted_message_id repeats the submit_sm_resp id; Econet's receipt text writes it in decimal.
      expect(receipt?.tlvs.receipted_message_id).toBe(outcome.message_id);
      const parsed = parseReceiptText(receipt?.short_message ?? "");
      expect(parsed?.id).toMatch(/^\d+$/);
      expect(canonicalSmscId(parsed?.id ?? "", "decimal")).toBe(canonicalSmscId(outcome.message_id, "hex"));
      expect(parsed).toMatchObject({
        stat: "DELIVRD",
        err: "000",
        sub: "001",
        dlvrd: "001",
      });
      expect(parsed?.submitDate).toMatch(/^\d{10}$/);
      await waitFor(() => sim.receiptsSent[0]?.command_status === 0, { what: "deliver_sm_resp" });
    });

    it("are acknowledged only once handled; a failing handler makes the SMSC deliver again", async () => {
      const { sim, port } = await startSimulator({ receiptDelayMs: 0, receiptRetryDelayMs: 20 });
      let calls = 0;
      let open = () => {};
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const onDeliverSm = async () => {
        calls++;
        await gate;
        if (calls === 1) throw new Error("database unavailable");
      };
      const { session } = await boundSession(port, {}, { onDeliverSm });

      await session.submit(message("ack later"));
      await waitFor(() => calls === 1, { what: "the handler to be called" });
      // A second submit's round trip flushes anything the session wrote before it.
      await session.submit({ ...message("flush"), registered_delivery: 0 });
      expect(sim.receiptsSent[0]?.command_status).toBeUndefined();

      open();
      await waitFor(() => sim.receiptsSent[1]?.command_status === 0, {
        what: "the redelivered receipt's ack",
      });
      expect(sim.receiptsSent[0]?.command_status).toBe(STATUS.ESME_RX_T_APPN);
      expect(calls).toBe(2);
    });

    it("may arrive before the submit_sm_resp and still reach onDeliverSm", async () => {
      const { port } = await startSimulator({ receiptBeforeResponseRate: 1 });
      const events: string[] = [];
      const { session } = await boundSession(
        port,
        {},
        {
          onDeliverSm: (r) =>
            void events.push(`receipt ${canonicalSmscId(r.tlvs.receipted_message_id ?? "", "hex")}`),
        },
      );

      const outcome = responseOf(await session.submit(message("early receipt")));
      events.push(`response ${canonicalSmscId(outcome.message_id, "hex")}`);

      const id = canonicalSmscId(outcome.message_id, "hex");
      expect(events).toEqual([`receipt ${id}`, `response ${id}`]);
    });

    it("are delivered twice when the SMSC duplicates them", async () => {
      const { sim, port } = await startSimulator({ receiptDelayMs: 0, duplicateReceiptRate: 1 });
      const receipts: DeliverSm[] = [];
      const { session } = await boundSession(port, {}, { onDeliverSm: (r) => void receipts.push(r) });

      await session.submit(message("twice"));
      await waitFor(
        () => sim.receiptsSent.length === 2 && sim.receiptsSent.every((r) => r.command_status === 0),
        {
          what: "two acknowledged receipts",
        },
      );

      expect(receipts).toHaveLength(2);
      expect(receipts[0]?.tlvs.receipted_message_id).toBe(receipts[1]?.tlvs.receipted_message_id);
    });
  });

  describe("link upkeep", () => {
    it("keeps an otherwise idle session alive with enquire_link", async () => {
      const { sim, port } = await startSimulator({ idleTimeoutMs: 1_000 });
      const { states } = await boundSession(port, { enquire_link_interval_ms: 50 });

      await waitFor(() => sim.stats.enquireLinksReceived >= 30, {
        what: "30 enquire_links",
        timeoutMs: 10_000,
      });

      expect(sim.stats.connections).toBe(1);
      expect(states).toEqual(["connecting", "bound"]);
    });

    it("rebinds by itself when the SMSC drops an idle connection", async () => {
      const { sim, port } = await startSimulator({ idleTimeoutMs: 100 });
      const { session, linkEvents } = await boundSession(port);

      await waitFor(() => sim.stats.binds >= 2 && session.state === "bound", { what: "a rebind" });
      expect(sim.stats.connections).toBeGreaterThanOrEqual(2);
      // Each loss counted once, and the bind after it as a rebind for the same reason.
      expect(linkEvents.slice(0, 2)).toEqual(["disconnect:peer_closed", "rebind:peer_closed"]);
    });

    it("abandons a connection whose enquire_link goes unanswered, and rebinds", async () => {
      const { sim, port } = await startSimulator({ answerEnquireLink: false });
      const { session, logs, linkEvents } = await boundSession(port, {
        enquire_link_interval_ms: 30,
        response_timeout_ms: 100,
      });

      await waitFor(() => sim.stats.binds >= 2 && session.state === "bound", { what: "a rebind" });
      expect(logs.some((l) => l.msg.includes("enquire_link unanswered"))).toBe(true);
      expect(linkEvents.slice(0, 2)).toEqual([
        "disconnect:enquire_link_timeout",
        "rebind:enquire_link_timeout",
      ]);
    });

    it("answers the SMSC's enquire_link", async () => {
      const { sim, port } = await startSimulator({ enquireLinkIntervalMs: 20 });
      await boundSession(port);

      await waitFor(() => sim.stats.enquireLinkRespsReceived >= 3, { what: "three enquire_link_resp" });
    });
  });

  it("close() lets submits in flight finish, unbinds, and stays closed", async () => {
    const { sim, port } = await startSimulator({ submitLatencyMs: 100 });
    const { session, states, linkEvents } = await boundSession(port);

    const inFlight = session.submit(message("last one"));
    await waitFor(() => session.inFlight === 1, { what: "the submit to take its slot" });
    await session.close();

    expect(responseOf(await inFlight).command_status).toBe(0);
    expect(sim.stats.unbindsReceived).toBe(1);
    expect(session.state).toBe("disconnected");
    expect(states.slice(-2)).toEqual(["closing", "disconnected"]);
    expect(await session.submit(message("too late"))).toEqual({ kind: "not_sent", reason: "closing" });
    expect(await session.waitUntilBound(10)).toBe(false);
    await waitFor(() => sim.boundSessions === 0, { what: "the SMSC to see the session go" });
    expect(sim.stats.connections).toBe(1);
    expect(linkEvents).toEqual([]); // our own close is neither a disconnect nor followed by a rebind
  });

  it("keeps retrying a refused bind and never logs the password", async () => {
    const { sim, port } = await startSimulator();
    const { session, logs, linkEvents } = startSession(port, { password: "not-the-password" });

    await waitFor(() => sim.stats.bindFailures >= 2, { what: "two refused binds" });
    expect(linkEvents).toEqual([]); // never bound, so nothing was lost

    expect(await session.waitUntilBound(10)).toBe(false);
    expect(await session.submit(message("nope"))).toEqual({ kind: "not_sent", reason: "not_bound" });
    const refusal = logs.find((l) => l.msg === "bind_transceiver refused");
    expect(refusal?.obj).toMatchObject({ status: "ESME_RINVPASWD (0x0000000e)" });
    expect(JSON.stringify(logs)).not.toContain("not-the-password");
  });
});

/**
 * An SMSC written here, for the requests the simulator never makes: it answers every submit_sm
 * with generic_nack, unbinds the first session of its own accord once told to, and writes it any
 * bytes it is given; it keeps the responses it gets (but to unbind).
 */
async function startRudeSmsc() {
  const sessions: Session[] = [];
  const stats = { binds: 0, unbindResps: 0 };
  const responses: PDU[] = [];
  const server = smpp.createServer({}, (session: Session) => {
    sessions.push(session);
    session.on("error", () => session.destroy());
    session.on("pdu", (pdu: PDU) => {
      if (pdu.command === "bind_transceiver") {
        stats.binds++;
        session.send(pdu.response({ system_id: "rude" }));
      } else if (pdu.command === "submit_sm") {
        session.send(
          new smpp.PDU("generic_nack", { sequence_number: pdu.sequence_number, command_status: 0x03 }),
        );
      } else if (pdu.command === "unbind_resp") {
        stats.unbindResps++;
        session.close();
      } else if (!pdu.isResponse()) {
        session.send(pdu.response());
      } else responses.push(pdu);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    port: (server.address() as AddressInfo).port,
    stats,
    responses,
    unbindFirst: () => sessions[0]?.unbind({}),
    writeFirst: (bytes: Buffer) => sessions[0]?.socket.write(bytes),
  };
}

/** A final receipt as an SMSC that uses data_sm writes it: the id and state in TLVs only. */
const dataSmReceiptBytes = (sequence_number: number) =>
  new smpp.PDU("data_sm", {
    source_addr: "263771234567",
    destination_addr: "SHIRI",
    esm_class: 0x04,
    receipted_message_id: `a1b2c3${sequence_number}`,
    message_state: 2,
    sequence_number,
  }).toBuffer();

describe("SmppSession and the SMSC's own requests", () => {
  it("answers an unbind from the SMSC, then binds again", async () => {
    const smsc = await startRudeSmsc();
    const { session, states, linkEvents } = await boundSession(smsc.port);

    smsc.unbindFirst();

    await waitFor(() => smsc.stats.unbindResps === 1, { what: "our unbind_resp" });
    await waitFor(() => smsc.stats.binds === 2 && session.state === "bound", { what: "a rebind" });
    expect(states).toEqual(["connecting", "bound", "disconnected", "connecting", "bound"]);
    expect(linkEvents).toEqual(["disconnect:peer_unbind", "rebind:peer_unbind"]);
  });

  it("answers an unreadable request with generic_nack ESME_RINVCMDLEN, an unknown one with ESME_RINVCMDID", async () => {
    const smsc = await startRudeSmsc();
    const { session, logs } = await boundSession(smsc.port);
    // A deliver_sm whose source_addr has no NUL within SMPP's 21 octets, then a command SMPP lacks.
    const unreadable = new smpp.PDU("deliver_sm", {
      source_addr: "2".repeat(30),
      short_message: "x",
      sequence_number: 901,
    }).toBuffer();
    const unknown = Buffer.alloc(16);
    unknown.writeUInt32BE(16, 0);
    unknown.writeUInt32BE(0x00000777, 4);
    unknown.writeUInt32BE(902, 12);

    smsc.writeFirst(Buffer.concat([unreadable, unknown]));

    await waitFor(() => smsc.responses.length === 2, { what: "both answered" });
    expect(smsc.responses.map((p) => [p.command, p.command_status, p.sequence_number])).toEqual([
      ["generic_nack", STATUS.ESME_RINVCMDLEN, 901],
      ["generic_nack", STATUS.ESME_RINVCMDID, 902],
    ]);
    expect(logs.find((l) => l.msg === "unreadable PDU")?.obj).toMatchObject({ sequence_number: 901 });
    expect(session.state).toBe("bound");
  });

  it("refuses data_sm receipts with ESME_RINVCMDID, counts each and warns once, not per PDU", async () => {
    const smsc = await startRudeSmsc();
    const metrics = createMetrics();
    const { session, logs } = await boundSession(
      smsc.port,
      {},
      {
        onRefusedPdu: (command) => metrics.smppRefusedPdus.inc({ link: "rude", command }),
      },
    );

    // A carrier sending its receipts as data_sm, 50 in a burst.
    smsc.writeFirst(Buffer.concat(Array.from({ length: 50 }, (_, i) => dataSmReceiptBytes(1000 + i))));

    await waitFor(() => smsc.responses.length === 50, { what: "every data_sm answered" });
    expect(new Set(smsc.responses.map((p) => `${p.command} ${p.command_status}`))).toEqual(
      new Set([`data_sm_resp ${STATUS.ESME_RINVCMDID}`]),
    );
    const refusals = logs.filter((l) => l.msg === "unsupported PDU refused");
    expect(refusals).toEqual([
      {
        level: "warn",
        msg: "unsupported PDU refused",
        obj: {
          command: "data_sm",
          command_id: "0x00000103",
          sequence_number: 1000,
          answered: "data_sm_resp ESME_RINVCMDID (0x00000003)",
          refused_since_last_line: 1,
        },
      },
    ]);
    const counter = await metrics.registry.getSingleMetric("shiri_smpp_refused_pdus_total")?.get();
    expect(counter?.values).toEqual([{ labels: { link: "rude", command: "data_sm" }, value: 50 }]);
    expect(session.state).toBe("bound");
  });

  it("names the link in that warning and counts it, as a CarrierLink runs the session", async () => {
    const smsc = await startRudeSmsc();
    const refused: string[] = [];
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    const link = new CarrierLink(
      "foreign",
      { ...CARRIERS.econet.smpp, port: smsc.port },
      {
        logger: createLogger("info", { destination: sink }),
        pacer: { acquire: async () => () => {} },
        breaker: {
          errorThresholdPercentage: 50,
          volumeThreshold: 10,
          resetTimeoutMs: 1_000,
          rollingCountTimeoutMs: 10_000,
        },
        onDeliverSm: async () => {},
        onRefusedPdu: (command) => refused.push(command),
      },
    );
    cleanups.push(() => link.close());
    link.start();
    expect(await link.session.waitUntilBound(5_000)).toBe(true);

    smsc.writeFirst(dataSmReceiptBytes(7));

    await waitFor(() => lines.some((l) => l.msg === "unsupported PDU refused"), { what: "the warning" });
    expect(lines.find((l) => l.msg === "unsupported PDU refused")).toMatchObject({
      level: 40, // warn
      link: "foreign",
      command: "data_sm",
      answered: "data_sm_resp ESME_RINVCMDID (0x00000003)",
    });
    // What the worker counts in shiri_smpp_refused_pdus_total (link-worker.ts).
    expect(refused).toEqual(["data_sm"]);
  });

  it("says a response to a sequence_number never used is not a late answer", async () => {
    const smsc = await startRudeSmsc();
    const { logs } = await boundSession(smsc.port);

    smsc.writeFirst(
      new smpp.PDU("submit_sm_resp", {
        sequence_number: 4242,
        command_status: 0x00,
        message_id: "x1",
      }).toBuffer(),
    );

    await waitFor(() => logs.some((l) => l.msg === "response to no pending request"), {
      what: "the warning",
    });
    expect(logs.find((l) => l.msg === "response to no pending request")?.obj).toEqual({
      command: "submit_sm_resp",
      sequence_number: 4242,
      status: "ESME_ROK (0x00000000)",
      message_id: "x1",
      past_late_answer_window: false,
    });
  });

  it("treats a generic_nack for a submit as that submit failing, with the nack's status", async () => {
    const smsc = await startRudeSmsc();
    const { session, logs } = await boundSession(smsc.port);

    const outcome = await session.submit(message("nacked"), { ref: "message 0190-abc part 1" });

    expect(outcome).toEqual({ kind: "response", command_status: STATUS.ESME_RINVCMDID, message_id: "" });
    expect(actionFor(STATUS.ESME_RINVCMDID)).toBe("fail");
    // Named by the caller's ref: the session knows no message id.
    expect(logs.find((l) => l.msg === "submit_sm answered with generic_nack")?.obj).toMatchObject({
      ref: "message 0190-abc part 1",
      sequence_number: expect.any(Number),
      status: "ESME_RINVCMDID (0x00000003)",
    });
    expect(session.state).toBe("bound");
  });
});
