/**
 * One SMPP 3.4 session to one carrier, a transceiver (a transmitter when asked), its PDUs framed
 * by wire.ts and coded by pdu-codec.ts: bind and rebind with back-off, a window of submits in
 * flight, per-PDU response timeouts, enquire_link both ways, throttling back-off with a slow start
 * after it (congestion-window.ts), and an honest outcome for every submit, including those lost on
 * the wire. Its options and outcomes are typed in session-types.ts.
 */
import type { SmppSettings } from "../../carriers/types.ts";
import { numberForLog } from "../logger.ts";
import { actionFor, describeStatus, STATUS } from "./command-status.ts";
import { CongestionWindow, type WindowChange } from "./congestion-window.ts";
import { DeliverLater, toDeliverSm } from "./deliver-sm.ts";
import type { LinkLossReason } from "./link-events.ts";
import { isResponse, type Pdu, request, responseTo, stringField, tlvValue } from "./pdu.ts";
import type { PduBodyError } from "./pdu-codec.ts";
import { RefusedPdus } from "./refused-pdus.ts";
import type {
  LateAnswer,
  SessionState,
  SmppLogger,
  SmppSessionOptions,
  SubmitOptions,
  SubmitOutcome,
  SubmitParams,
} from "./session-types.ts";
import { type SubmitSmFields, secondsLeft, submitSm, validityPeriod } from "./submit-sm.ts";
import { UnansweredSubmits } from "./unanswered-submits.ts";
import { SmppWire } from "./wire.ts";

export { DeliverLater, type DeliverSm, type DeliverSmTlvs } from "./deliver-sm.ts";
// Every session type, so dispatch, receipts and inbound import from one place.
export type * from "./session-types.ts";

type Reply = Pdu | "timeout" | "closed";

interface Connection {
  session: SmppWire;
  /** Requests awaiting a response, by sequence_number. */
  pending: Map<number, (reply: Reply) => void>;
  /** Submits that timed out, by sequence_number, still listening for a late answer. */
  late: Map<number, LateListener>;
  /**
   * Submits whose late-answer window passed unanswered, by sequence_number (the most recent
   * PAST_WINDOW_KEPT): an answer that comes after all is logged as past the window.
   */
  pastWindow: Map<number, SubmitOnWire>;
  closed: boolean;
  whenClosed: Promise<void>;
  enquireOutstanding: boolean;
  /** Set once bound: only a bound connection's loss is a disconnect. */
  bound: boolean;
  /** Why we are ending it, or why the peer did; "peer_closed" when nothing said otherwise. */
  lossReason: LinkLossReason | undefined;
  /** The socket is corked until the end of this tick (see write). */
  corked: boolean;
}

/**
 * Sends a PDU, gathering every PDU written in the same tick into one socket write: a batch of
 * submits (or the deliver_sm_resps of a burst of receipts) leaves in a few packets instead of one
 * write call and one packet each. Nagle stays off, so nothing waits past the tick.
 */
function write(conn: Connection, pdu: Pdu, sent?: () => void): boolean {
  const socket = conn.session.socket;
  if (!conn.corked && socket.writable) {
    conn.corked = true;
    socket.cork();
    process.nextTick(() => {
      conn.corked = false;
      socket.uncork();
    });
  }
  return conn.session.send(pdu, sent);
}

/** A submit as its log lines name it: the caller's ref, and when it was written. */
interface SubmitOnWire {
  ref: string | undefined;
  sentAt: number;
}
interface LateListener extends SubmitOnWire {
  heard: (answer: Pdu | null) => void;
}
/** Past-window submits remembered per connection; an answer to one forgotten is logged as to nothing. */
const PAST_WINDOW_KEPT = 1_000;

const INTERFACE_VERSION_3_4 = 0x34;
/** Requests SMPP 3.4 defines without a response PDU. */
const NO_RESPONSE = new Set(["alert_notification", "outbind"]);
/** Exponential with "equal jitter": half fixed, half random, so a fleet does not reconnect in step. */
function backoff(attempt: number, initialMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

export class SmppSession {
  private stateNow: SessionState = "disconnected";
  private conn: Connection | undefined;
  private stopping = true;
  private closing: Promise<void> | undefined;
  private reconnectAttempt = 0;
  /** The loss the next successful bind recovers from. */
  private lostBecause: LinkLossReason | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private enquireTimer: NodeJS.Timeout | undefined;
  private slotsInUse = 0;
  /**
   * Of slotsInUse, those kept by submits that timed out, until their late answer or the end of the
   * late-answer window. They count against window_size only, not against a window cut by
   * throttling: else one silent submit would stop the bind for the whole late-answer window.
   */
  private lateKept = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private readonly drainWaiters = new Set<() => void>();
  private readonly boundWaiters = new Set<(bound: boolean) => void>();
  private pausedUntil = 0;
  private throttleDelayMs: number;
  /** The unanswered submits allowed now: window_size, cut to one by throttling and grown back. */
  private readonly window: CongestionWindow;
  private bindAnswer: { system_id: string; interface_version: number | null } | null = null;
  private bindFailure: string | null = null;
  private readonly log: SmppLogger;
  private readonly refused: RefusedPdus;
  /** Submits written and not yet answered or given up: a receipt that overtook its answer waits on it. */
  readonly unanswered: UnansweredSubmits;

  constructor(private readonly options: SmppSessionOptions) {
    this.log = options.logger;
    this.unanswered = options.unanswered ?? new UnansweredSubmits();
    this.refused = new RefusedPdus(options.logger, options.onRefusedPdu);
    this.throttleDelayMs = options.throttle?.initialDelayMs ?? 250;
    this.window = new CongestionWindow(options.settings.window_size);
  }

  get state(): SessionState {
    return this.stateNow;
  }

  /** The carrier's settings, dialect included (id formats, data coding, concatenation). */
  get settings(): Readonly<SmppSettings> {
    return this.options.settings;
  }

  /** What the SMSC said in its bind resp: its system_id and interface version, if any. */
  get negotiated(): { system_id: string; interface_version: number | null } | null {
    return this.bindAnswer;
  }

  /**
   * Why the last attempt to connect and bind failed, in words: the socket's error ("connect
   * ECONNREFUSED …"), no answer to the connect, the bind refused (with its status) or unanswered,
   * or the connection closed before the bind's answer; null once bound.
   */
  get lastBindFailure(): string | null {
    return this.bindFailure;
  }

  /** Connections or binds that failed since the session was last bound (0 while bound). */
  get failedBinds(): number {
    return this.reconnectAttempt;
  }

  /** Submits holding a window slot (on the wire, or about to be). */
  get inFlight(): number {
    return this.slotsInUse;
  }

  /** Submits that may hold a window slot at once now: window_size, or fewer after throttling. */
  get effectiveWindow(): number {
    return this.window.size;
  }

  /** Connect and bind, and keep doing so after every loss until close(). */
  start(): void {
    if (!this.stopping) return;
    this.stopping = false;
    this.closing = undefined;
    this.lostBecause = undefined; // a fresh start binds; it recovers from nothing
    this.connect();
  }

  /** True once bound; false if not bound within timeoutMs or the session is closed meanwhile. */
  waitUntilBound(timeoutMs: number): Promise<boolean> {
    if (this.stateNow === "bound") return Promise.resolve(true);
    if (this.stopping) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (bound: boolean) => {
        clearTimeout(timer);
        this.boundWaiters.delete(done);
        resolve(bound);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.boundWaiters.add(done);
    });
  }

  async submit(params: SubmitParams, options: SubmitOptions = {}): Promise<SubmitOutcome> {
    if (this.closing) return { kind: "not_sent", reason: "closing" };
    if (options.stillWanted && !options.stillWanted()) return { kind: "not_sent", reason: "withdrawn" };
    if (this.stateNow !== "bound") return { kind: "not_sent", reason: "not_bound" };
    // Guarded here, not only inside: a link that never throttles pays no promise per submit.
    if (Date.now() < this.pausedUntil) await this.throttlePause();
    await this.acquireSlot();
    let answered = () => {};
    // A submit that timed out is still outstanding at the SMSC until its late answer or the end of
    // the late-answer window: its window slot is kept until then, so the SMSC never holds more
    // than window_size of ours unanswered.
    let slotKeptForLateAnswer = false;
    const { ref } = options;
    try {
      // A pause that began while this submit waited for its slot holds it too: else each slot
      // freed by a throttled answer would send the next submit straight into the same throttle.
      if (Date.now() < this.pausedUntil) await this.throttlePause();
      // The TPS token is taken last, right before the write, so that a wait for a window slot
      // cannot bunch PDUs up on the wire closer together than the limit spaced them.
      try {
        answered = (await this.options.pacer?.acquire()) ?? answered;
      } catch (error) {
        this.log.error({ err: error }, "rate limiter failed");
        return { kind: "not_sent", reason: "rate_limiter" };
      }
      const conn = this.conn;
      if (this.closing) return { kind: "not_sent", reason: "closing" };
      if (this.stateNow !== "bound" || !conn) return { kind: "not_sent", reason: "not_bound" };
      if (options.stillWanted && !options.stillWanted()) return { kind: "not_sent", reason: "withdrawn" };
      let reply: Promise<Reply> | null;
      let pdu: Pdu;
      const sentAt = Date.now();
      try {
        pdu = submitSm(this.submitFields(params));
        reply = this.request(conn, pdu);
      } catch (error) {
        this.log.error(
          { err: error, destination_addr: numberForLog(params.destination_addr), ref },
          "submit_sm not encodable",
        );
        return { kind: "not_sent", reason: "invalid_pdu" };
      }
      if (!reply) return { kind: "not_sent", reason: "socket_unwritable" };
      const serial = this.unanswered.written();
      const r = await reply;
      this.unanswered.done(serial);
      if (r === "timeout") {
        const late = this.lateAnswer(conn, pdu, { ref, sentAt });
        slotKeptForLateAnswer = true;
        // Its slot now counts against window_size only: a waiter may take its place in a cut window.
        this.lateKept++;
        this.handOverSlots();
        void late.finally(() => this.releaseSlot(true));
        return { kind: "unknown", reason: "timeout", late };
      }
      if (r === "closed") return { kind: "unknown", reason: "connection_lost" };
      if (r.command === "generic_nack") {
        // The SMSC could not take this PDU at all: a failed submit, with the nack's reason.
        const command_status =
          r.command_status === STATUS.ESME_ROK ? STATUS.ESME_RINVCMDID : r.command_status;
        this.log.warn(
          {
            destination_addr: numberForLog(params.destination_addr),
            ref,
            sequence_number: pdu.sequence_number,
            status: describeStatus(command_status),
          },
          "submit_sm answered with generic_nack",
        );
        this.noteAnswer(r);
        return { kind: "response", command_status, message_id: "" };
      }
      this.noteAnswer(r);
      return { kind: "response", command_status: r.command_status, message_id: stringField(r, "message_id") };
    } finally {
      answered();
      if (!slotKeptForLateAnswer) this.releaseSlot();
    }
  }

  /** Stop accepting submits, let those in flight settle (bounded), unbind, close. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
    for (const waiter of [...this.boundWaiters]) waiter(false);
    const conn = this.conn;
    if (!conn || conn.closed) return this.setState("disconnected");
    const wasBound = this.stateNow === "bound";
    this.setState("closing");
    await this.drained(this.options.closeTimeoutMs ?? this.settings.response_timeout_ms);
    clearInterval(this.enquireTimer);
    if (wasBound && !conn.closed) {
      const reply = this.request(conn, request("unbind"));
      const r = reply ? await reply : "closed";
      if (typeof r !== "string") this.log.info({ command_status: r.command_status }, "unbound");
    }
    if (!conn.closed) {
      conn.session.close();
      // A peer that never closes its side must not hold close() open.
      const force = setTimeout(() => conn.session.destroy(), 1_000);
      await conn.whenClosed;
      clearTimeout(force);
    }
    this.setState("disconnected");
  }

  private setState(state: SessionState): void {
    if (state === this.stateNow) return;
    this.stateNow = state;
    // A carrier link logs each change itself (at info); a session without one does at debug.
    if (!this.options.onStateChange) this.log.debug({ state }, "smpp session state");
    if (state === "bound") for (const waiter of [...this.boundWaiters]) waiter(true);
    this.options.onStateChange?.(state);
  }

  private connect(): void {
    this.reconnectTimer = undefined;
    if (this.stopping) return;
    this.setState("connecting");
    const { host, port } = this.settings;
    const session = new SmppWire({ host, port });
    let markClosed = () => {};
    const conn: Connection = {
      session,
      pending: new Map(),
      late: new Map(),
      pastWindow: new Map(),
      closed: false,
      whenClosed: new Promise((resolve) => {
        markClosed = resolve;
      }),
      enquireOutstanding: false,
      bound: false,
      lossReason: undefined,
      corked: false,
    };
    this.conn = conn;
    // A blackholed host never answers the TCP handshake, and the socket has no timeout of its own.
    const connectDeadline = setTimeout(() => {
      this.bindFailure = `no answer to the connection within ${this.settings.response_timeout_ms} ms`;
      session.destroy();
    }, this.settings.response_timeout_ms);
    session.on("connect", () => {
      clearTimeout(connectDeadline);
      session.socket.setNoDelay(true);
      void this.bind(conn);
    });
    // After a framing error the wire reads no more; only a fresh connection recovers.
    session.on("error", (error) => {
      this.log.warn({ host, port, err: error.message }, "smpp connection error");
      if (!conn.bound) this.bindFailure = error.message;
      conn.lossReason ??= "socket_error";
      session.destroy();
    });
    session.on("close", () => {
      clearTimeout(connectDeadline);
      this.onClosed(conn);
      markClosed();
    });
    session.on("pdu", (pdu: Pdu) => this.onPdu(conn, pdu));
    session.on("invalid", (error: PduBodyError) => this.onInvalidPdu(conn, error));
  }

  private async bind(conn: Connection): Promise<void> {
    const { host, port, system_id, system_type } = this.settings;
    const command = this.options.bindAs === "transmitter" ? "bind_transmitter" : "bind_transceiver";
    const pdu = request(command, {
      system_id,
      password: this.settings.password,
      system_type,
      interface_version: INTERFACE_VERSION_3_4,
      addr_ton: 0,
      addr_npi: 0,
      address_range: "",
    });
    const reply = this.request(conn, pdu);
    const r = reply ? await reply : "closed";
    if (r === "closed") {
      // A socket error already said why (it is logged and kept as it happens).
      if (!this.stopping && conn.lossReason === undefined)
        this.bindFailure = `the connection closed before ${command} was answered`;
      return;
    }
    if (r === "timeout" || r.command_status !== STATUS.ESME_ROK) {
      const status = r === "timeout" ? "timeout" : describeStatus(r.command_status);
      this.log.error({ host, port, system_id, status }, `${command} refused`);
      this.bindFailure =
        r === "timeout"
          ? `no answer to ${command} within ${this.settings.response_timeout_ms} ms`
          : `${command} refused: ${status}`;
      conn.session.destroy();
      return;
    }
    if (this.stopping) return void conn.session.destroy();
    this.reconnectAttempt = 0;
    this.bindFailure = null;
    const version = tlvValue(r, "sc_interface_version");
    this.bindAnswer = {
      system_id: stringField(r, "system_id"),
      interface_version: typeof version === "number" ? version : null,
    };
    this.log.info({ host, port, system_id }, "smpp session bound");
    conn.bound = true;
    if (this.lostBecause) this.options.onLinkEvent?.("rebind", this.lostBecause);
    this.lostBecause = undefined;
    this.setState("bound");
    clearInterval(this.enquireTimer);
    this.enquireTimer = setInterval(
      () => void this.enquireLink(conn),
      this.settings.enquire_link_interval_ms,
    );
  }

  private onClosed(conn: Connection): void {
    conn.closed = true;
    // Every submit on the wire becomes "connection_lost".
    for (const settle of [...conn.pending.values()]) settle("closed");
    for (const { heard } of [...conn.late.values()]) heard(null);
    if (this.conn !== conn) return;
    this.conn = undefined;
    clearInterval(this.enquireTimer);
    if (this.stateNow === "bound")
      this.log.warn({ host: this.settings.host, port: this.settings.port }, "smpp connection lost");
    if (this.stopping) return;
    if (conn.bound) {
      this.lostBecause = conn.lossReason ?? "peer_closed";
      this.options.onLinkEvent?.("disconnect", this.lostBecause);
    }
    this.setState("disconnected");
    const { initialDelayMs = 500, maxDelayMs = 30_000 } = this.options.reconnect ?? {};
    const delay = backoff(this.reconnectAttempt++, initialDelayMs, maxDelayMs);
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  /**
   * Listens for the answer to a submit that timed out, for the late-answer window (the carrier's
   * answer proves it took the message: it is recorded, not sent again). Null when the window
   * passes or the connection closes first.
   */
  private lateAnswer(conn: Connection, pdu: Pdu, submit: SubmitOnWire): Promise<LateAnswer | null> {
    const seq = pdu.sequence_number;
    if (conn.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        heard(null);
        conn.pastWindow.set(seq, submit);
        for (const oldest of conn.pastWindow.keys()) {
          if (conn.pastWindow.size <= PAST_WINDOW_KEPT) break;
          conn.pastWindow.delete(oldest);
        }
      }, this.lateWindowMs());
      const heard = (answer: Pdu | null) => {
        clearTimeout(timer);
        conn.late.delete(seq);
        if (!answer || answer.command === "generic_nack") return resolve(null);
        resolve({ command_status: answer.command_status, message_id: stringField(answer, "message_id") });
      };
      conn.late.set(seq, { ...submit, heard });
    });
  }

  /** How long after a submit's timeout its answer is still listened for. */
  lateWindowMs(): number {
    return this.options.lateAnswerWindowMs ?? this.settings.response_timeout_ms * 3;
  }

  /** Sends a request; resolves with its response, "timeout" or "closed". Null if nothing was written. */
  private request(conn: Connection, pdu: Pdu): Promise<Reply> | null {
    if (conn.closed || !write(conn, pdu)) return null;
    const seq = pdu.sequence_number;
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle("timeout"), this.settings.response_timeout_ms);
      const settle = (reply: Reply) => {
        clearTimeout(timer);
        conn.pending.delete(seq);
        resolve(reply);
      };
      conn.pending.set(seq, settle);
    });
  }

  private onPdu(conn: Connection, pdu: Pdu): void {
    if (isResponse(pdu)) {
      const settle = conn.pending.get(pdu.sequence_number);
      if (settle) {
        settle(pdu);
        return;
      }
      const late = conn.late.get(pdu.sequence_number);
      if (late) {
        this.log.warn(
          {
            sequence_number: pdu.sequence_number,
            status: describeStatus(pdu.command_status),
            ref: late.ref,
            answered_after_ms: Date.now() - late.sentAt,
          },
          pdu.command_status === 0
            ? "late submit_sm_resp: recorded, not resent"
            : "late submit_sm_resp: a refusal, the segment goes again",
        );
        // A late answer says as much about the carrier's load as one in time (decision 0039).
        this.noteAnswer(pdu);
        late.heard(pdu);
        return;
      }
      this.onUnexpectedResponse(conn, pdu);
      return;
    }
    switch (pdu.command) {
      case "enquire_link":
        write(conn, responseTo(pdu));
        return;
      case "unbind":
        // Answered, then the connection is closed; onClosed binds again (promptly) unless we stop.
        this.log.info({ host: this.settings.host, port: this.settings.port }, "peer unbound");
        if (this.stateNow === "bound") this.setState(this.stopping ? "closing" : "disconnected");
        this.reconnectAttempt = 0;
        conn.lossReason ??= "peer_unbind";
        // No new submits from here; the answers to those on the wire may still come before the
        // SMSC closes, and each proves the carrier took its segment. Answering at once and
        // closing would lose them, and every such segment would be sent again.
        void this.drained(this.settings.response_timeout_ms).then(() => {
          if (!conn.closed) write(conn, responseTo(pdu), () => conn.session.close());
        });
        return;
      case "deliver_sm":
        void this.handleDeliverSm(conn, pdu);
        return;
      default: {
        // Refused, not dropped in silence: an operator must see a carrier sending what we never take.
        const answer = NO_RESPONSE.has(pdu.command) ? null : responseTo(pdu, STATUS.ESME_RINVCMDID);
        if (answer) write(conn, answer);
        this.refused.note(pdu, answer);
      }
    }
  }

  /**
   * A response that answers nothing we wait for. Typically a submit_sm_resp past the late-answer
   * window: if ESME_ROK, the carrier took a segment that is sent again, so the handset may get it
   * twice (the fix is a longer response_timeout_ms). Otherwise a sequence_number we never used or
   * no longer remember: the SMSC's mistake.
   */
  private onUnexpectedResponse(conn: Connection, pdu: Pdu): void {
    const submit = conn.pastWindow.get(pdu.sequence_number);
    conn.pastWindow.delete(pdu.sequence_number);
    this.log.warn(
      {
        command: pdu.command,
        sequence_number: pdu.sequence_number,
        status: describeStatus(pdu.command_status),
        message_id: stringField(pdu, "message_id"),
        past_late_answer_window: submit !== undefined,
        ...(submit && {
          ref: submit.ref,
          answered_after_ms: Date.now() - submit.sentAt,
          // What it was measured against: first the timeout, then the window after it.
          response_timeout_ms: this.settings.response_timeout_ms,
          late_answer_window_ms: this.lateWindowMs(),
        }),
      },
      "response to no pending request",
    );
  }

  /**
   * A PDU whose body does not fit its command_length: a request is answered with generic_nack
   * and ESME_RINVCMDLEN (SMPP 3.4 4.3). A response still answers its request by its header:
   * its command_status counts, and an ESME_ROK is the carrier's acceptance whatever its id holds
   * (decision 0001); dropped, its submit would time out and be sent again. Its fields are
   * unread, so an accepted submit's message_id is empty.
   */
  private onInvalidPdu(conn: Connection, error: PduBodyError): void {
    const { header } = error;
    this.log.warn({ err: error.message, sequence_number: header.sequence_number }, "unreadable PDU");
    if (isResponse(header)) {
      this.onPdu(conn, header);
      return;
    }
    if (NO_RESPONSE.has(header.command)) return;
    write(conn, {
      command: "generic_nack",
      command_id: 0x80000000,
      command_status: STATUS.ESME_RINVCMDLEN,
      sequence_number: header.sequence_number,
      fields: {},
      tlvs: [],
    });
  }

  private async handleDeliverSm(conn: Connection, pdu: Pdu): Promise<void> {
    let command_status = STATUS.ESME_ROK;
    try {
      await this.options.onDeliverSm?.(toDeliverSm(pdu));
    } catch (error) {
      // A temporary application error tells the SMSC to deliver the receipt again later.
      command_status = STATUS.ESME_RX_T_APPN;
      if (error instanceof DeliverLater)
        this.log.debug(
          { reason: error.message, sequence_number: pdu.sequence_number },
          "deliver_sm left for later",
        );
      // The error itself, not its text: the outage log (src/logger.ts) knows a database out of
      // reach by it, and holds back the line each receipt would otherwise log.
      else this.log.error({ err: error, sequence_number: pdu.sequence_number }, "deliver_sm handler failed");
    }
    if (!conn.closed) write(conn, responseTo(pdu, command_status));
  }

  private async enquireLink(conn: Connection): Promise<void> {
    if (conn.enquireOutstanding || conn.closed) return;
    conn.enquireOutstanding = true;
    const reply = this.request(conn, request("enquire_link"));
    const r = reply ? await reply : "timeout";
    conn.enquireOutstanding = false;
    if (r === "timeout") {
      this.log.warn(
        { host: this.settings.host, port: this.settings.port },
        "enquire_link unanswered; reconnecting",
      );
      conn.lossReason ??= "enquire_link_timeout";
      conn.session.destroy();
    }
  }

  private submitFields(p: SubmitParams): SubmitSmFields {
    const s = this.settings;
    const fields: SubmitSmFields = {
      source_addr_ton: p.source_addr_ton ?? s.source_addr_ton,
      source_addr_npi: p.source_addr_npi ?? s.source_addr_npi,
      source_addr: p.source_addr,
      dest_addr_ton: s.dest_addr_ton,
      dest_addr_npi: s.dest_addr_npi,
      destination_addr: p.destination_addr,
      registered_delivery: p.registered_delivery ?? 1,
      data_coding: p.data_coding,
      short_message: p.short_message,
      udh: p.udh,
    };
    if (p.sar) {
      fields.sar_msg_ref_num = p.sar.ref;
      fields.sar_total_segments = p.sar.total;
      fields.sar_segment_seqnum = p.sar.seq;
    }
    if (p.validUntil !== undefined) fields.validity_period = validityPeriod(secondsLeft(p.validUntil));
    return fields;
  }

  /**
   * Throttling answers pause every new submit and cut the window to one unanswered submit; each
   * accepted answer grows it back by one (a slow start, decision 0039) and resets the pause length.
   * A generic_nack counts only when its status says the carrier is throttling.
   */
  private noteAnswer(answer: Pdu): void {
    const status = answer.command_status;
    if (answer.command === "generic_nack" && actionFor(status) !== "backoff") return;
    const { initialDelayMs = 250, maxDelayMs = 10_000 } = this.options.throttle ?? {};
    if (actionFor(status) === "backoff") {
      const cut = this.window.throttled();
      // Answers to one burst arrive together: only a throttle after the pause ended escalates it.
      if (Date.now() < this.pausedUntil) {
        // Only an answer accepted amid the burst's throttles can have grown it back meanwhile.
        if (cut) this.logWindowCut(status, cut);
        return;
      }
      const pause = backoff(0, this.throttleDelayMs, maxDelayMs);
      this.pausedUntil = Math.max(this.pausedUntil, Date.now() + pause);
      this.throttleDelayMs = Math.min(maxDelayMs, this.throttleDelayMs * 2);
      this.log.warn(
        {
          status: describeStatus(status),
          pauseMs: Math.round(pause),
          window: this.window.size,
          ...(cut && { windowWas: cut.from }),
        },
        "carrier throttling; pausing submits",
      );
    } else if (status === STATUS.ESME_ROK) {
      this.throttleDelayMs = initialDelayMs;
      const grown = this.window.accepted();
      if (grown && !this.window.reduced)
        this.log.info({ window: grown.to }, "carrier accepting again; submit window back to window_size");
    }
  }

  private logWindowCut(status: number, cut: NonNullable<WindowChange>): void {
    this.log.warn(
      { status: describeStatus(status), window: cut.to, windowWas: cut.from },
      "carrier throttling; submit window cut to 1",
    );
  }

  private async throttlePause(): Promise<void> {
    // Short steps, so close() is not held up by a long pause.
    while (!this.stopping && Date.now() < this.pausedUntil) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.pausedUntil - Date.now(), 100)));
    }
  }

  /**
   * Whether one more submit may take a slot: those awaiting their answer in time stay under the
   * effective window, and every slot, those kept for a late answer included, under window_size,
   * so the SMSC never holds more than window_size of ours unanswered.
   */
  private slotFree(): boolean {
    return this.slotsInUse - this.lateKept < this.window.size && this.slotsInUse < this.window.ceiling;
  }

  private acquireSlot(): Promise<void> {
    // Behind any waiter, never past it: first come, first served.
    if (this.slotWaiters.length === 0 && this.slotFree()) {
      this.slotsInUse++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  /** `keptForLateAnswer`: the slot of a submit that timed out, counted in lateKept. */
  private releaseSlot(keptForLateAnswer = false): void {
    this.slotsInUse--;
    if (keptForLateAnswer) this.lateKept--;
    this.handOverSlots();
    if (this.slotsInUse === 0) for (const done of [...this.drainWaiters]) done();
  }

  /**
   * Hands free slots over, oldest waiter first, only while slotFree: none after a throttle cut the
   * window below those in use (the waiters stay queued, and go as answers free slots), two when an
   * accepted answer grew it by one, one when a submit's timeout moved its slot to lateKept.
   */
  private handOverSlots(): void {
    while (this.slotWaiters.length > 0 && this.slotFree()) {
      const next = this.slotWaiters.shift();
      if (!next) break;
      this.slotsInUse++;
      next();
    }
  }

  private drained(timeoutMs: number): Promise<void> {
    if (this.slotsInUse === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.drainWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.drainWaiters.add(done);
    });
  }
}
