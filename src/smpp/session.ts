/**
 * One SMPP 3.4 transceiver session to one carrier. The PDUs are node-smpp's, framed and coded by
 * wire.ts and pdu-codec.ts; this session adds what node-smpp lacks: bind and rebind with back-off,
 * a window of submits in flight, per-PDU response timeouts, enquire_link both ways, throttling
 * back-off, and an honest outcome for every submit, including those lost on the wire.
 */
import smpp, { type PDU } from "smpp";
import type { SmppSettings } from "../../carriers/types.ts";
import { numberForLog } from "../logger.ts";
import { actionFor, describeStatus, STATUS } from "./command-status.ts";
import type { LinkEvent, LinkLossReason } from "./link-events.ts";
import { isReceiptType, type SmppAddresses, type SubmitSmFields, validityPeriod } from "./pdu-codec.ts";
import { type Outgoing, OutgoingSubmit, SmppWire } from "./wire.ts";

export type SessionState = "disconnected" | "connecting" | "bound" | "closing";

/** pino-compatible. */
export interface SmppLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface RateLimiter {
  /** Resolves when one submit_sm may be written; the returned function is called once it is answered. */
  acquire(): Promise<() => void>;
}

export interface SubmitParams {
  source_addr: string;
  destination_addr: string;
  data_coding: number;
  /** Encoded user data, without the UDH. */
  short_message: Buffer;
  /** User data header, with its length octet: prepended to the user data, UDHI set in esm_class. */
  udh?: Buffer;
  /** Default 1: a receipt on any final state. */
  registered_delivery?: number;
  /** An absolute expiry, or seconds from submission (sent in SMPP relative form). */
  validity?: Date | number;
  /** Override the settings' TON/NPI, e.g. for a numeric sender. */
  source_addr_ton?: number;
  source_addr_npi?: number;
  /** Concatenation by the sar_* TLVs (SMPP 3.4 5.3.2.22–24) instead of a UDH. */
  sar?: { ref: number; total: number; seq: number };
}

export type SubmitOutcome =
  | { kind: "response"; command_status: number; message_id: string }
  /** Never reached the wire: safe to retry. */
  | {
      kind: "not_sent";
      reason: "not_bound" | "closing" | "socket_unwritable" | "invalid_pdu" | "rate_limiter" | "withdrawn";
    }
  /** Was on the wire and the carrier may have accepted it: settle by receipt, never resend blindly. */
  | { kind: "unknown"; reason: "connection_lost" }
  /**
   * No answer within response_timeout_ms. The carrier may still answer: `late` resolves with that
   * answer if it comes within the late-answer window on the same connection, else with null.
   */
  | { kind: "unknown"; reason: "timeout"; late: Promise<LateAnswer | null> };

/** How one submit may be called off while it waits for a window slot or a TPS token. */
export interface SubmitOptions {
  /**
   * Asked right before the PDU is written: false withdraws it (outcome not_sent "withdrawn"). The
   * dispatcher withdraws the submits of messages whose lease it no longer holds.
   */
  stillWanted?: () => boolean;
}

/** A submit_sm_resp that came after its submit had timed out. */
export interface LateAnswer {
  command_status: number;
  message_id: string;
}

export interface DeliverSmTlvs {
  receipted_message_id?: string;
  message_state?: number;
  network_error_code?: Buffer;
  user_message_reference?: number;
  /** Concatenation by TLVs (SMPP 3.4 5.3.2.22–24): the message's reference, its parts, this part. */
  sar_msg_ref_num?: number;
  sar_total_segments?: number;
  sar_segment_seqnum?: number;
}

export interface DeliverSm extends SmppAddresses {
  service_type: string;
  esm_class: number;
  data_coding: number;
  /** Decoded by data_coding; message_payload's text when short_message is empty. */
  short_message: string;
  /** UDH information elements ([IEI, length, ...data]) when esm_class has UDHI. */
  udh: Buffer[];
  /**
   * Not a receipt: the user data's octets as they came, after the UDH (short_message's, else
   * message_payload's), for the inbound stage to decode itself (see pdu-codec.ts decodePdu).
   */
  user_data?: Buffer;
  /** esm_class message type is a delivery receipt: final (0x04) or intermediate (see isIntermediate). */
  isReceipt: boolean;
  /**
   * An intermediate delivery notification: SMPP 3.4's 0x20, or 0x08 (SME delivery
   * acknowledgement), which some SMSCs use for it. It never ends a message.
   */
  isIntermediate: boolean;
  tlvs: DeliverSmTlvs;
}

export interface SmppSessionOptions {
  settings: SmppSettings;
  logger: SmppLogger;
  /** Shared TPS budget; awaited once per submit_sm, after it has a window slot, just before the write. */
  rateLimiter?: RateLimiter;
  /** deliver_sm_resp is sent only after this settles; a throw answers ESME_RX_T_APPN so the SMSC retries. */
  onDeliverSm?: (pdu: DeliverSm) => Promise<void> | void;
  onStateChange?: (state: SessionState) => void;
  /** A bound session lost (not by close()), and each bind that follows such a loss. */
  onLinkEvent?: (event: LinkEvent, reason: LinkLossReason) => void;
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** Pause of new submits after ESME_RTHROTTLED / ESME_RMSGQFUL, doubling while they persist. */
  throttle?: { initialDelayMs?: number; maxDelayMs?: number };
  /** How long close() waits for submits in flight; default response_timeout_ms. */
  closeTimeoutMs?: number;
  /** How long after a submit's timeout its answer still counts (recorded, not resent); default 3 × response_timeout_ms. */
  lateAnswerWindowMs?: number;
}

type Reply = PDU | "timeout" | "closed";

interface Connection {
  session: SmppWire;
  /** Requests awaiting a response, by sequence_number. */
  pending: Map<number, (reply: Reply) => void>;
  /** Submits that timed out, by sequence_number, still listening for a late answer. */
  late: Map<number, (answer: PDU | null) => void>;
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
function write(conn: Connection, pdu: Outgoing, sent?: () => void): boolean {
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

const INTERFACE_VERSION_3_4 = 0x34;
/** esm_class bits 2–5: message type (SMPP 3.4 5.2.12). */
const ESM_CLASS_TYPE_MASK = 0x3c;
const ESM_CLASS_INTERMEDIATE = new Set([0x08, 0x20]);
/** esm_class's UDH indicator. */
const ESM_CLASS_UDHI = 0x40;
/** Requests SMPP 3.4 defines without a response PDU. */
const NO_RESPONSE = new Set(["alert_notification", "outbind"]);
const TLV_KINDS = {
  receipted_message_id: "string",
  message_state: "number",
  network_error_code: "buffer",
  user_message_reference: "number",
  sar_msg_ref_num: "number",
  sar_total_segments: "number",
  sar_segment_seqnum: "number",
} as const;

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function num(v: unknown): number {
  return typeof v === "number" ? v : 0;
}

/** Exponential with "equal jitter": half fixed, half random, so a fleet does not reconnect in step. */
function backoff(attempt: number, initialMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

function decodeText(sm: unknown): { text: string; udh: Buffer[] } {
  if (typeof sm !== "object" || sm === null || !("message" in sm)) return { text: "", udh: [] };
  const message: unknown = sm.message;
  const udh: unknown = "udh" in sm ? sm.udh : undefined;
  return {
    text: typeof message === "string" ? message : Buffer.isBuffer(message) ? message.toString("latin1") : "",
    udh: Array.isArray(udh) ? udh.filter((ie): ie is Buffer => Buffer.isBuffer(ie)) : [],
  };
}

/** A deliver_sm as Shiri reads it (exported for the codec's tests). */
export function toDeliverSm(pdu: PDU): DeliverSm {
  let { text, udh } = decodeText(pdu.short_message);
  if (text === "" && pdu.message_payload !== undefined) ({ text, udh } = decodeText(pdu.message_payload));
  const tlvs: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(TLV_KINDS)) {
    const v = pdu[name];
    if (
      kind === "string"
        ? typeof v === "string"
        : kind === "number"
          ? typeof v === "number"
          : Buffer.isBuffer(v)
    )
      tlvs[name] = v;
  }
  const esm_class = num(pdu.esm_class);
  const isIntermediate = ESM_CLASS_INTERMEDIATE.has(esm_class & ESM_CLASS_TYPE_MASK);
  const raw = pdu.user_data;
  // The UDH's first octet is its length: the text starts after it.
  const user_data = !Buffer.isBuffer(raw)
    ? undefined
    : (esm_class & ESM_CLASS_UDHI) !== 0 && raw.length > 0
      ? raw.subarray(Math.min(raw.length, 1 + (raw[0] as number)))
      : raw;
  return {
    service_type: str(pdu.service_type),
    source_addr_ton: num(pdu.source_addr_ton),
    source_addr_npi: num(pdu.source_addr_npi),
    source_addr: str(pdu.source_addr),
    dest_addr_ton: num(pdu.dest_addr_ton),
    dest_addr_npi: num(pdu.dest_addr_npi),
    destination_addr: str(pdu.destination_addr),
    esm_class,
    data_coding: num(pdu.data_coding),
    short_message: text,
    udh,
    ...(user_data ? { user_data } : {}),
    isReceipt: isReceiptType(esm_class),
    isIntermediate,
    tlvs: tlvs as DeliverSmTlvs,
  };
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
  private readonly slotWaiters: (() => void)[] = [];
  private readonly drainWaiters = new Set<() => void>();
  private readonly boundWaiters = new Set<(bound: boolean) => void>();
  private pausedUntil = 0;
  private throttleDelayMs: number;
  private bindAnswer: { system_id: string; interface_version: number | null } | null = null;
  private bindRefusal: string | null = null;
  private readonly log: SmppLogger;

  constructor(private readonly options: SmppSessionOptions) {
    this.log = options.logger;
    this.throttleDelayMs = options.throttle?.initialDelayMs ?? 250;
  }

  get state(): SessionState {
    return this.stateNow;
  }

  /** The carrier's settings, dialect included (id formats, data coding, concatenation). */
  get settings(): Readonly<SmppSettings> {
    return this.options.settings;
  }

  /** What the SMSC said in its bind_transceiver_resp: its system_id and interface version, if any. */
  get negotiated(): { system_id: string; interface_version: number | null } | null {
    return this.bindAnswer;
  }

  /** Why the last bind failed (a command status name, or "timeout"); null once bound. */
  get lastBindRefusal(): string | null {
    return this.bindRefusal;
  }

  /** Connections or binds that failed since the session was last bound (0 while bound). */
  get failedBinds(): number {
    return this.reconnectAttempt;
  }

  /** Submits holding a window slot (on the wire, or about to be). */
  get inFlight(): number {
    return this.slotsInUse;
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
    await this.throttlePause();
    await this.acquireSlot();
    let answered = () => {};
    try {
      // The TPS token is taken last, right before the write, so that a wait for a window slot
      // cannot bunch PDUs up on the wire closer together than the limit spaced them.
      try {
        answered = (await this.options.rateLimiter?.acquire()) ?? answered;
      } catch (error) {
        this.log.error({ err: String(error) }, "rate limiter failed");
        return { kind: "not_sent", reason: "rate_limiter" };
      }
      const conn = this.conn;
      if (this.closing) return { kind: "not_sent", reason: "closing" };
      if (this.stateNow !== "bound" || !conn) return { kind: "not_sent", reason: "not_bound" };
      if (options.stillWanted && !options.stillWanted()) return { kind: "not_sent", reason: "withdrawn" };
      let reply: Promise<Reply> | null;
      let pdu: OutgoingSubmit;
      try {
        pdu = new OutgoingSubmit(this.submitFields(params));
        reply = this.request(conn, pdu);
      } catch (error) {
        this.log.error(
          { err: String(error), destination_addr: numberForLog(params.destination_addr) },
          "submit_sm not encodable",
        );
        return { kind: "not_sent", reason: "invalid_pdu" };
      }
      if (!reply) return { kind: "not_sent", reason: "socket_unwritable" };
      const r = await reply;
      if (r === "timeout") return { kind: "unknown", reason: "timeout", late: this.lateAnswer(conn, pdu) };
      if (r === "closed") return { kind: "unknown", reason: "connection_lost" };
      if (r.command === "generic_nack") {
        // The SMSC could not take this PDU at all: a failed submit, with the nack's reason.
        const command_status =
          r.command_status === STATUS.ESME_ROK ? STATUS.ESME_RINVCMDID : r.command_status;
        this.log.warn(
          { destination_addr: numberForLog(params.destination_addr), status: describeStatus(command_status) },
          "submit_sm answered with generic_nack",
        );
        return { kind: "response", command_status, message_id: "" };
      }
      this.noteStatus(r.command_status);
      return { kind: "response", command_status: r.command_status, message_id: str(r.message_id) };
    } finally {
      answered();
      this.releaseSlot();
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
      const reply = this.request(conn, new smpp.PDU("unbind", {}));
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
    this.log.debug({ state }, "smpp session state");
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
    const connectDeadline = setTimeout(() => session.destroy(), this.settings.response_timeout_ms);
    session.on("connect", () => {
      clearTimeout(connectDeadline);
      session.socket.setNoDelay(true);
      void this.bind(conn);
    });
    // After a framing error the wire reads no more; only a fresh connection recovers.
    session.on("error", (error) => {
      this.log.warn({ host, port, err: error.message }, "smpp connection error");
      conn.lossReason ??= "socket_error";
      session.destroy();
    });
    session.on("close", () => {
      clearTimeout(connectDeadline);
      this.onClosed(conn);
      markClosed();
    });
    session.on("pdu", (pdu) => this.onPdu(conn, pdu));
  }

  private async bind(conn: Connection): Promise<void> {
    const { host, port, system_id, system_type } = this.settings;
    const pdu = new smpp.PDU("bind_transceiver", {
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
    if (r === "closed") return;
    if (r === "timeout" || r.command_status !== STATUS.ESME_ROK) {
      const status = r === "timeout" ? "timeout" : describeStatus(r.command_status);
      this.log.error({ host, port, system_id, status }, "bind_transceiver refused");
      this.bindRefusal = status;
      conn.session.destroy();
      return;
    }
    if (this.stopping) return void conn.session.destroy();
    this.reconnectAttempt = 0;
    this.bindRefusal = null;
    const version = r.sc_interface_version;
    this.bindAnswer = {
      system_id: typeof r.system_id === "string" ? r.system_id : "",
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
    for (const heard of [...conn.late.values()]) heard(null);
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
  private lateAnswer(conn: Connection, pdu: Outgoing): Promise<LateAnswer | null> {
    const seq = pdu.sequence_number;
    if (conn.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => heard(null), this.lateWindowMs());
      const heard = (answer: PDU | null) => {
        clearTimeout(timer);
        conn.late.delete(seq);
        if (!answer || answer.command === "generic_nack") return resolve(null);
        resolve({ command_status: answer.command_status, message_id: str(answer.message_id) });
      };
      conn.late.set(seq, heard);
    });
  }

  /** How long after a submit's timeout its answer is still listened for. */
  lateWindowMs(): number {
    return this.options.lateAnswerWindowMs ?? this.settings.response_timeout_ms * 3;
  }

  /** Sends a request; resolves with its response, "timeout" or "closed". Null if nothing was written. */
  private request(conn: Connection, pdu: Outgoing): Promise<Reply> | null {
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

  private onPdu(conn: Connection, pdu: PDU): void {
    if (pdu.isResponse()) {
      const settle = conn.pending.get(pdu.sequence_number);
      if (settle) {
        settle(pdu);
        return;
      }
      const late = conn.late.get(pdu.sequence_number);
      if (late) {
        this.log.warn(
          { sequence_number: pdu.sequence_number, status: describeStatus(pdu.command_status) },
          "late submit_sm_resp: recorded, not resent",
        );
        late(pdu);
        return;
      }
      // Typically a submit_sm_resp after our timeout: the carrier did take the message.
      this.log.warn(
        {
          command: pdu.command,
          sequence_number: pdu.sequence_number,
          status: describeStatus(pdu.command_status),
          message_id: str(pdu.message_id),
        },
        "response to no pending request",
      );
      return;
    }
    switch (pdu.command) {
      case "enquire_link":
        write(conn, pdu.response());
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
          if (!conn.closed) write(conn, pdu.response(), () => conn.session.close());
        });
        return;
      case "deliver_sm":
        void this.handleDeliverSm(conn, pdu);
        return;
      default:
        if (!NO_RESPONSE.has(pdu.command))
          write(conn, pdu.response({ command_status: STATUS.ESME_RINVCMDID }));
    }
  }

  private async handleDeliverSm(conn: Connection, pdu: PDU): Promise<void> {
    let command_status = STATUS.ESME_ROK;
    try {
      await this.options.onDeliverSm?.(toDeliverSm(pdu));
    } catch (error) {
      // A temporary application error tells the SMSC to deliver the receipt again later.
      command_status = STATUS.ESME_RX_T_APPN;
      this.log.error(
        { err: String(error), sequence_number: pdu.sequence_number },
        "deliver_sm handler failed",
      );
    }
    if (!conn.closed) write(conn, pdu.response({ command_status }));
  }

  private async enquireLink(conn: Connection): Promise<void> {
    if (conn.enquireOutstanding || conn.closed) return;
    conn.enquireOutstanding = true;
    const reply = this.request(conn, new smpp.PDU("enquire_link", {}));
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
    if (p.validity !== undefined) fields.validity_period = validityPeriod(p.validity);
    return fields;
  }

  /** Throttling answers pause every new submit; success resets the pause length. */
  private noteStatus(status: number): void {
    const { initialDelayMs = 250, maxDelayMs = 10_000 } = this.options.throttle ?? {};
    if (actionFor(status) === "backoff") {
      // Answers to one burst arrive together: only a throttle after the pause ended escalates it.
      if (Date.now() < this.pausedUntil) return;
      const pause = backoff(0, this.throttleDelayMs, maxDelayMs);
      this.pausedUntil = Math.max(this.pausedUntil, Date.now() + pause);
      this.throttleDelayMs = Math.min(maxDelayMs, this.throttleDelayMs * 2);
      this.log.warn(
        { status: describeStatus(status), pauseMs: Math.round(pause) },
        "carrier throttling; pausing submits",
      );
    } else if (status === STATUS.ESME_ROK) {
      this.throttleDelayMs = initialDelayMs;
    }
  }

  private async throttlePause(): Promise<void> {
    // Short steps, so close() is not held up by a long pause.
    while (!this.stopping && Date.now() < this.pausedUntil) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.pausedUntil - Date.now(), 100)));
    }
  }

  private acquireSlot(): Promise<void> {
    if (this.slotsInUse < this.settings.window_size) {
      this.slotsInUse++;
      return Promise.resolve();
    }
    // The releasing submit hands its slot straight over, so the count never exceeds the window.
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  private releaseSlot(): void {
    const next = this.slotWaiters.shift();
    if (next) next();
    else this.slotsInUse--;
    if (this.slotsInUse === 0) for (const done of [...this.drainWaiters]) done();
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
