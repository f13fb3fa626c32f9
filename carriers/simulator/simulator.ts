/**
 * A carrier SMSC on loopback: a real SMPP 3.4 server (node-smpp's) that binds, answers submits
 * with ids in the carrier's style and sends delivery receipts, with failure modes tests can flip
 * at runtime. It records what it accepted so tests can count duplicates and reassemble texts.
 */
import type { AddressInfo } from "node:net";
import smpp, { type PDU, type Session } from "smpp";
import {
  DEFAULT_RECEIPT_SHAPE,
  formatId,
  type IdStyle,
  type IntermediateStat,
  RECEIPT_STATS,
  type ReceiptPduFields,
  type ReceiptShape,
  type ReceiptStat,
  receiptPdu,
} from "./receipt.ts";

export interface SimulatorBehaviour {
  /** Delay before each submit_sm_resp. */
  submitLatencyMs: number;
  /** Delay between the submit_sm_resp and the receipt. */
  receiptDelayMs: number;
  /** Relative weights of final receipt states. */
  outcomes: Partial<Record<ReceiptStat, number>>;
  /** Accepted submit_sm per sliding second; beyond it ESME_RTHROTTLED. 0 = no limit. */
  tpsLimit: number;
  /** Destinations always refused with `rejectStatus`. */
  rejectDestinations: readonly string[];
  /** Probability (0–1) of refusing any submit with `rejectStatus`. */
  rejectRate: number;
  /** A permanent error by default: ESME_RINVDSTADR. */
  rejectStatus: number;
  /** Drop the TCP connection when this many submits have arrived on it; unanswered ones are lost. */
  dropAfterSubmits: number | null;
  /** Probability (0–1) of dropping the connection when a submit arrives. */
  dropRate: number;
  /**
   * Probability (0–1) that a submit on the wire when its connection is lost (received, not yet
   * answered) had already been taken: it is accepted, delivered and receipted like any other, but
   * its submit_sm_resp is lost with the connection (`acceptedOnDrop`). 0, the default, loses them
   * all unaccepted. This is the in-flight window Shiri cannot close: it must send them again.
   */
  acceptOnDropRate: number;
  /** Probability (0–1) of sending a receipt twice. */
  duplicateReceiptRate: number;
  /**
   * Probability (0–1) of taking a submit (it is accepted, delivered and receipted) but never
   * sending its submit_sm_resp: the answer lost between the carrier and Shiri.
   */
  unansweredRate: number;
  /** Probability (0–1) of answering a submit with generic_nack (`genericNackStatus`) instead. */
  genericNackRate: number;
  /** ESME_RSYSERR by default: a transient failure of the SMSC. */
  genericNackStatus: number;
  /** Probability (0–1) of sending the receipt before the submit_sm_resp. */
  receiptBeforeResponseRate: number;
  /** false simulates a hung SMSC that no longer answers enquire_link. */
  answerEnquireLink: boolean;
  /** Our own enquire_link to bound sessions every this many ms; 0 = never. */
  enquireLinkIntervalMs: number;
  /** Drop a connection on which the ESME sent nothing for this long, as real SMSCs do; 0 = never. */
  idleTimeoutMs: number;
  /** Redelivery of a receipt refused by deliver_sm_resp or lost with its connection. */
  receiptRetryDelayMs: number;
  maxReceiptAttempts: number;
}

/** Every message accepted and delivered shortly after. */
export const DEFAULT_BEHAVIOUR: Readonly<SimulatorBehaviour> = {
  submitLatencyMs: 0,
  receiptDelayMs: 200,
  outcomes: { DELIVRD: 1 },
  tpsLimit: 0,
  rejectDestinations: [],
  rejectRate: 0,
  rejectStatus: 0x0b,
  dropAfterSubmits: null,
  dropRate: 0,
  acceptOnDropRate: 0,
  duplicateReceiptRate: 0,
  unansweredRate: 0,
  genericNackRate: 0,
  genericNackStatus: 0x08,
  receiptBeforeResponseRate: 0,
  answerEnquireLink: true,
  enquireLinkIntervalMs: 0,
  idleTimeoutMs: 0,
  receiptRetryDelayMs: 1_000,
  maxReceiptAttempts: 5,
};

export interface SimLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface SimulatorOptions {
  /** Operator name, for logs. */
  name: string;
  host?: string;
  /** 0 picks an ephemeral port; start() returns it. */
  port: number;
  system_id: string;
  password: string;
  ids: { submit_sm_resp: IdStyle; receipt: IdStyle };
  /** How receipts are written (default: TLVs and Appendix B text, one per segment). */
  receipts?: Partial<ReceiptShape>;
  /**
   * What this SMSC insists on: GSM 03.38 text as data_coding 0 or 1, concatenation by UDH or SAR
   * TLVs. A submit that does otherwise is refused (ESME_RINVDCS / ESME_RINVESMCLASS), as a strict
   * SMSC would. Undefined accepts either.
   */
  accepts?: { gsmDataCoding?: 0 | 1; concatenation?: "udh" | "sar" };
  behaviour?: Partial<SimulatorBehaviour>;
  logger?: SimLogger;
  /** Seed for the outcome/failure dice, so a failing run can be replayed. */
  seed?: number;
  /** Most accepted records kept; the oldest half is dropped beyond it (long bench runs). */
  recordLimit?: number;
}

export interface Concat {
  ref: number;
  part: number;
  total: number;
  by: "udh" | "sar";
}

export interface AcceptedSubmit {
  /** As written in submit_sm_resp. */
  messageId: string;
  /** The same id as written in receipts. */
  receiptId: string;
  source_addr: string;
  destination_addr: string;
  data_coding: number;
  registered_delivery: number;
  /** When the submit's validity_period runs out (node-smpp reads either time form); null when it gave none. */
  validUntil: Date | null;
  text: string;
  concat: Concat | null;
  at: Date;
  connection: number;
}

export interface SentReceipt {
  receiptId: string;
  stat: ReceiptStat | IntermediateStat;
  attempt: number;
  at: Date;
  /** deliver_sm_resp command_status; undefined until answered. */
  command_status?: number;
}

export interface ReassembledMessage {
  source_addr: string;
  destination_addr: string;
  text: string;
  parts: number;
  messageIds: string[];
  complete: boolean;
}

interface Conn {
  id: number;
  session: Session;
  bound: boolean;
  closed: boolean;
  submits: number;
  outstanding: number;
  /** The submits received and not yet answered, by sequence_number. */
  pending: Map<number, PDU>;
  /** deliver_sm sent on this connection awaiting deliver_sm_resp, by sequence_number. */
  receipts: Map<number, { delivery: Delivery; sent: SentReceipt }>;
  idle?: NodeJS.Timeout;
  enquire?: NodeJS.Timeout;
}

interface Delivery {
  receiptId: string;
  fields: ReceiptPduFields;
  stat: ReceiptStat | IntermediateStat;
  attempt: number;
  duplicates: number;
  preferred: Conn;
}

const STATUS = {
  ROK: 0x00,
  RINVBNDSTS: 0x04,
  RINVPASWD: 0x0e,
  RINVSYSID: 0x0f,
  RINVESMCLASS: 0x43,
  RTHROTTLED: 0x58,
  RINVDCS: 0x104,
} as const;
/** registered_delivery bits 0–1: 1 = receipt on any final state, 2 = on failure only. */
const RECEIPT_REQUEST_MASK = 0x03;
const UDH_IEI = { CONCAT_8BIT_REF: 0x00, CONCAT_16BIT_REF: 0x08 } as const;

const silent: SimLogger = { info() {}, warn() {}, debug() {} };

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function num(v: unknown): number {
  return typeof v === "number" ? v : 0;
}

/** mulberry32: small, seedable, good enough for dice. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** node-smpp hands a decoded short_message as { message, udh? }; udh is a list of IEs. */
function readShortMessage(pdu: PDU): { text: string; concat: Concat | null } {
  const sm = pdu.short_message ?? pdu.message_payload;
  if (typeof sm !== "object" || sm === null || !("message" in sm)) return { text: "", concat: null };
  const message: unknown = sm.message;
  const text =
    typeof message === "string" ? message : Buffer.isBuffer(message) ? message.toString("hex") : "";
  const udh: unknown = "udh" in sm ? sm.udh : undefined;
  let concat: Concat | null = null;
  for (const ie of Array.isArray(udh) ? udh : []) {
    if (!Buffer.isBuffer(ie)) continue;
    if (ie[0] === UDH_IEI.CONCAT_8BIT_REF && ie.length >= 5) {
      concat = { ref: ie.readUInt8(2), total: ie.readUInt8(3), part: ie.readUInt8(4), by: "udh" };
    } else if (ie[0] === UDH_IEI.CONCAT_16BIT_REF && ie.length >= 6) {
      concat = { ref: ie.readUInt16BE(2), total: ie.readUInt8(4), part: ie.readUInt8(5), by: "udh" };
    }
  }
  const [ref, total, part] = [pdu.sar_msg_ref_num, pdu.sar_total_segments, pdu.sar_segment_seqnum];
  if (concat === null && typeof ref === "number" && typeof total === "number" && typeof part === "number")
    concat = { ref, total, part, by: "sar" };
  return { text, concat };
}

export class CarrierSimulator {
  readonly accepted: AcceptedSubmit[] = [];
  readonly rejections: { destination_addr: string; command_status: number; at: Date }[] = [];
  readonly receiptsSent: SentReceipt[] = [];
  /** Submits taken whose submit_sm_resp was never sent (`unansweredRate`). */
  readonly unanswered: AcceptedSubmit[] = [];
  /** Submits taken whose answer was lost with their connection (`acceptOnDropRate`). */
  readonly acceptedOnDrop: AcceptedSubmit[] = [];
  /** Submits answered with generic_nack (`genericNackRate`). */
  readonly nacked: { destination_addr: string; command_status: number; at: Date }[] = [];
  /** Submits on the wire (received, not yet answered) when this SMSC unbound their session. */
  readonly pendingAtUnbind: string[] = [];
  readonly stats = {
    connections: 0,
    binds: 0,
    bindFailures: 0,
    enquireLinksReceived: 0,
    enquireLinkRespsReceived: 0,
    unbindsReceived: 0,
    /** Answers to unbinds this SMSC sent (unbindAll). */
    unbindRespsReceived: 0,
    /** Most submits received but not yet answered on one connection, ever. */
    maxOutstanding: 0,
  };
  private behaviourNow: SimulatorBehaviour;
  private readonly server = smpp.createServer();
  private readonly conns = new Set<Conn>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Receipts waiting for a bound session, as a real SMSC stores them. */
  private readonly undelivered: Delivery[] = [];
  private readonly acceptTimes: number[] = [];
  private readonly random: () => number;
  private readonly log: SimLogger;
  private nextId: bigint;
  private connSeq = 0;
  private stopped = false;

  constructor(private readonly options: SimulatorOptions) {
    this.behaviourNow = { ...DEFAULT_BEHAVIOUR, ...options.behaviour };
    this.log = options.logger ?? silent;
    this.random = seededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
    // Ids of realistic width from a seed-dependent start, so no test can lean on one fixed id.
    this.nextId = BigInt(Math.floor(this.random() * 2 ** 32)) * 65_536n + 1n;
    this.server.on("session", (session) => this.onSession(session));
  }

  get behaviour(): Readonly<SimulatorBehaviour> {
    return this.behaviourNow;
  }

  /** Change failure modes at runtime; applies to PDUs that arrive from now on. */
  setBehaviour(patch: Partial<SimulatorBehaviour>): void {
    this.behaviourNow = { ...this.behaviourNow, ...patch };
    if (patch.enquireLinkIntervalMs !== undefined) for (const c of this.conns) this.armEnquireLink(c);
  }

  /** Submits received and not yet answered, over every connection. */
  get onTheWire(): number {
    let n = 0;
    for (const c of this.conns) n += c.pending.size;
    return n;
  }

  /** The bound sessions, oldest first: where a mobile-originated message can go (mobile-originated.ts). */
  boundSessionList(): Session[] {
    return [...this.conns].filter((c) => c.bound && !c.closed).map((c) => c.session);
  }

  get boundSessions(): number {
    return [...this.conns].filter((c) => c.bound && !c.closed).length;
  }

  async start(): Promise<{ port: number }> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.options.port, this.options.host ?? "127.0.0.1", () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    const { port } = this.server.address() as AddressInfo;
    this.log.info({ operator: this.options.name, port }, "carrier simulator listening");
    return { port };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.dropAllConnections();
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.log.info({ operator: this.options.name }, "carrier simulator stopped");
  }

  /** Cut every TCP connection at once, as a carrier restart or a network blip would. */
  dropAllConnections(): void {
    for (const c of this.conns) c.session.destroy();
  }

  /**
   * Unbind every bound session of our own accord, as an SMSC going down for maintenance does:
   * unbind is sent at once, submits arriving after it are refused ESME_RINVBNDSTS, and the
   * connection closes when the ESME answers. What was on the wire then is kept in
   * `pendingAtUnbind`. Resolves with the number of sessions unbound.
   */
  unbindAll(): number {
    let n = 0;
    for (const c of this.conns) {
      if (!c.bound || c.closed) continue;
      c.bound = false;
      this.pendingAtUnbind.push(...[...c.pending.values()].map((p) => str(p.destination_addr)));
      c.session.unbind({});
      n++;
    }
    return n;
  }

  /** Accepted submits grouped into whole messages; concatenated parts joined in part order. */
  messages(): ReassembledMessage[] {
    const out: ReassembledMessage[] = [];
    const groups = new Map<string, { first: AcceptedSubmit; parts: Map<number, AcceptedSubmit> }>();
    for (const a of this.accepted) {
      if (!a.concat) {
        const base = { source_addr: a.source_addr, destination_addr: a.destination_addr, text: a.text };
        out.push({ ...base, parts: 1, messageIds: [a.messageId], complete: true });
        continue;
      }
      const key = `${a.source_addr}|${a.destination_addr}|${a.concat.ref}|${a.concat.total}`;
      const group = groups.get(key) ?? { first: a, parts: new Map() };
      groups.set(key, group);
      // A resent part is a duplicate submit, counted in `accepted`; the message keeps the first.
      if (!group.parts.has(a.concat.part)) group.parts.set(a.concat.part, a);
    }
    for (const { first, parts } of groups.values()) {
      const total = first.concat?.total ?? 1;
      const ordered = [...parts.entries()].sort(([x], [y]) => x - y).map(([, p]) => p);
      out.push({
        source_addr: first.source_addr,
        destination_addr: first.destination_addr,
        text: ordered.map((p) => p.text).join(""),
        parts: ordered.length,
        messageIds: ordered.map((p) => p.messageId),
        complete: ordered.length === total,
      });
    }
    return out;
  }

  private schedule(fn: () => void, ms: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private onSession(session: Session): void {
    const conn: Conn = {
      id: ++this.connSeq,
      session,
      bound: false,
      closed: false,
      submits: 0,
      outstanding: 0,
      pending: new Map(),
      receipts: new Map(),
    };
    this.conns.add(conn);
    this.stats.connections++;
    session.socket.setNoDelay(true);
    session.on("error", (error) => {
      this.log.debug({ operator: this.options.name, err: error.message }, "simulator connection error");
      session.destroy();
    });
    session.on("close", () => this.onClose(conn));
    session.on("pdu", (pdu) => this.onPdu(conn, pdu));
    this.armIdle(conn);
  }

  private onClose(conn: Conn): void {
    conn.closed = true;
    conn.bound = false;
    clearTimeout(conn.idle);
    clearInterval(conn.enquire);
    this.conns.delete(conn);
    // Submits on the wire: some had been taken when the connection went (acceptOnDropRate).
    const takenRate = this.behaviourNow.acceptOnDropRate;
    if (takenRate > 0)
      for (const pdu of [...conn.pending.values()])
        if (this.roll(takenRate)) this.answerSubmit(conn, pdu, true);
    // Receipts in flight on a lost connection were never acknowledged: deliver them again.
    for (const { delivery } of conn.receipts.values()) this.retryReceipt(delivery);
    conn.receipts.clear();
  }

  private armIdle(conn: Conn): void {
    const ms = this.behaviourNow.idleTimeoutMs;
    if (ms <= 0 || conn.closed) return;
    if (conn.idle) conn.idle.refresh();
    else
      conn.idle = setTimeout(() => {
        this.log.info({ operator: this.options.name, connection: conn.id }, "idle connection dropped");
        conn.session.destroy();
      }, ms);
  }

  private armEnquireLink(conn: Conn): void {
    clearInterval(conn.enquire);
    const ms = this.behaviourNow.enquireLinkIntervalMs;
    if (ms > 0 && conn.bound) conn.enquire = setInterval(() => conn.session.enquire_link(), ms);
  }

  private onPdu(conn: Conn, pdu: PDU): void {
    if (!pdu.isResponse()) this.armIdle(conn);
    switch (pdu.command) {
      case "bind_transceiver":
        this.onBind(conn, pdu);
        return;
      case "submit_sm":
        this.onSubmit(conn, pdu);
        return;
      case "enquire_link":
        this.stats.enquireLinksReceived++;
        if (this.behaviourNow.answerEnquireLink) conn.session.send(pdu.response());
        return;
      case "unbind":
        this.stats.unbindsReceived++;
        conn.bound = false;
        conn.session.send(pdu.response(), () => conn.session.close());
        return;
      case "deliver_sm_resp":
        this.onDeliverSmResp(conn, pdu);
        return;
      case "enquire_link_resp":
        this.stats.enquireLinkRespsReceived++;
        return;
      case "unbind_resp":
        this.stats.unbindRespsReceived++;
        conn.session.close();
        return;
      default:
        // Other binds, query_sm, data_sm…: not offered by this SMSC.
        if (!pdu.isResponse()) conn.session.send(pdu.response({ command_status: 0x03 }));
    }
  }

  private onBind(conn: Conn, pdu: PDU): void {
    const systemId = str(pdu.system_id);
    const status =
      systemId !== this.options.system_id
        ? STATUS.RINVSYSID
        : str(pdu.password) !== this.options.password
          ? STATUS.RINVPASWD
          : STATUS.ROK;
    if (status !== STATUS.ROK) {
      this.stats.bindFailures++;
      this.log.warn({ operator: this.options.name, system_id: systemId, status }, "bind refused");
      conn.session.send(pdu.response({ command_status: status }), () => conn.session.close());
      return;
    }
    conn.bound = true;
    this.stats.binds++;
    conn.session.send(pdu.response({ system_id: `sim-${this.options.name}` }));
    this.armEnquireLink(conn);
    this.log.info({ operator: this.options.name, connection: conn.id }, "session bound");
    for (const d of this.undelivered.splice(0)) this.sendReceipt(d);
  }

  private onSubmit(conn: Conn, pdu: PDU): void {
    if (!conn.bound) {
      conn.session.send(pdu.response({ command_status: STATUS.RINVBNDSTS }));
      return;
    }
    conn.submits++;
    const b = this.behaviourNow;
    if ((b.dropAfterSubmits !== null && conn.submits >= b.dropAfterSubmits) || this.random() < b.dropRate) {
      this.log.info({ operator: this.options.name, connection: conn.id }, "dropping connection mid-batch");
      conn.session.destroy();
      return;
    }
    conn.outstanding++;
    conn.pending.set(pdu.sequence_number, pdu);
    this.stats.maxOutstanding = Math.max(this.stats.maxOutstanding, conn.outstanding);
    if (b.submitLatencyMs > 0) this.schedule(() => this.answerSubmit(conn, pdu), b.submitLatencyMs);
    else this.answerSubmit(conn, pdu);
  }

  /** Admission: permanent rejections first, then the TPS limit. Returns a command_status. */
  private admit(destination: string): number {
    const b = this.behaviourNow;
    if (b.rejectDestinations.includes(destination) || this.random() < b.rejectRate) return b.rejectStatus;
    if (b.tpsLimit > 0) {
      const now = Date.now();
      while (this.acceptTimes.length > 0 && (this.acceptTimes[0] ?? 0) <= now - 1_000)
        this.acceptTimes.shift();
      if (this.acceptTimes.length >= b.tpsLimit) return STATUS.RTHROTTLED;
      this.acceptTimes.push(now);
    }
    return STATUS.ROK;
  }

  /**
   * Answers a submit. `lostWithConnection`: its connection is gone (acceptOnDropRate), so it is
   * taken or refused as usual but nothing is sent back; its receipt goes by another session.
   */
  private answerSubmit(conn: Conn, pdu: PDU, lostWithConnection = false): void {
    if (conn.closed && !lostWithConnection) return; // lost with the connection: never accepted
    conn.outstanding--;
    conn.pending.delete(pdu.sequence_number);
    const destination = str(pdu.destination_addr);
    if (!lostWithConnection && this.roll(this.behaviourNow.genericNackRate)) {
      const command_status = this.behaviourNow.genericNackStatus;
      this.nacked.push({ destination_addr: destination, command_status, at: new Date() });
      conn.session.send(
        new smpp.PDU("generic_nack", { sequence_number: pdu.sequence_number, command_status }),
      );
      return;
    }
    const status = this.admit(destination);
    if (status !== STATUS.ROK) {
      this.rejections.push({ destination_addr: destination, command_status: status, at: new Date() });
      if (!lostWithConnection) conn.session.send(pdu.response({ command_status: status }));
      return;
    }
    const { text, concat } = readShortMessage(pdu);
    const refusal = this.dialectRefusal(pdu, concat);
    if (refusal !== null) {
      this.rejections.push({ destination_addr: destination, command_status: refusal, at: new Date() });
      if (!lostWithConnection) conn.session.send(pdu.response({ command_status: refusal }));
      return;
    }
    const value = this.nextId++;
    const record: AcceptedSubmit = {
      messageId: formatId(value, this.options.ids.submit_sm_resp),
      receiptId: formatId(value, this.options.ids.receipt),
      source_addr: str(pdu.source_addr),
      destination_addr: destination,
      data_coding: num(pdu.data_coding),
      registered_delivery: num(pdu.registered_delivery),
      validUntil: pdu.validity_period instanceof Date ? pdu.validity_period : null,
      text,
      concat,
      at: new Date(),
      connection: conn.id,
    };
    this.accepted.push(record);
    this.trim(this.accepted);
    // Lost with its connection, or (on a live one) left unanswered by the behaviour's dice.
    const leftUnanswered = !lostWithConnection && this.roll(this.behaviourNow.unansweredRate);
    if (lostWithConnection) this.acceptedOnDrop.push(record);
    if (leftUnanswered) this.unanswered.push(record);
    const unanswered = lostWithConnection || leftUnanswered;
    const respond = () => {
      if (!unanswered) conn.session.send(pdu.response({ message_id: record.messageId }));
    };
    const stat = this.pickOutcome();
    const rd = record.registered_delivery & RECEIPT_REQUEST_MASK;
    const shape = this.receiptShape;
    // One receipt per message: only the chosen segment's submit gets one.
    const skipped =
      shape.perMessage !== null &&
      concat !== null &&
      concat.part !== (shape.perMessage === "first" ? 1 : concat.total);
    if (rd === 0 || (rd === 2 && stat === "DELIVRD") || skipped) return void respond();
    const deliveryOf = (s: ReceiptStat | IntermediateStat, duplicates: number): Delivery => ({
      receiptId: record.receiptId,
      fields: receiptPdu(
        {
          id: record.receiptId,
          submitId: record.messageId,
          stat: s,
          submittedAt: record.at,
          doneAt: new Date(),
          text,
          source: { addr: record.source_addr, ton: num(pdu.source_addr_ton), npi: num(pdu.source_addr_npi) },
          destination: { addr: destination, ton: num(pdu.dest_addr_ton), npi: num(pdu.dest_addr_npi) },
        },
        shape,
      ),
      stat: s,
      attempt: 1,
      duplicates,
      preferred: conn,
    });
    const deliveries = [
      ...shape.intermediate.map((s) => deliveryOf(s, 0)),
      deliveryOf(stat, this.random() < this.behaviourNow.duplicateReceiptRate ? 1 : 0),
    ];
    const sendAll = () => {
      for (const d of deliveries) this.sendReceipt(d);
    };
    if (this.random() < this.behaviourNow.receiptBeforeResponseRate) {
      sendAll();
      respond();
    } else {
      respond();
      this.schedule(sendAll, this.behaviourNow.receiptDelayMs);
    }
  }

  private get receiptShape(): ReceiptShape {
    return { ...DEFAULT_RECEIPT_SHAPE, ...this.options.receipts };
  }

  /** A command_status when the submit breaks this SMSC's dialect, else null. */
  private dialectRefusal(pdu: PDU, concat: Concat | null): number | null {
    const accepts = this.options.accepts ?? {};
    const dataCoding = num(pdu.data_coding);
    if (accepts.gsmDataCoding !== undefined && (dataCoding === 0 || dataCoding === 1))
      if (dataCoding !== accepts.gsmDataCoding) return STATUS.RINVDCS;
    if (accepts.concatenation !== undefined && concat !== null && concat.by !== accepts.concatenation)
      return STATUS.RINVESMCLASS;
    return null;
  }

  /** Keeps long bench runs from growing without bound: drops the oldest half past the limit. */
  private trim(records: unknown[]): void {
    const limit = this.options.recordLimit ?? 200_000;
    if (records.length > limit) records.splice(0, Math.floor(limit / 2));
  }

  /** A die for a fault off by default: thrown only when the fault is on, so a seed replays as before. */
  private roll(probability: number): boolean {
    return probability > 0 && this.random() < probability;
  }

  private pickOutcome(): ReceiptStat {
    const weights = RECEIPT_STATS.map((s) => Math.max(0, this.behaviourNow.outcomes[s] ?? 0));
    const total = weights.reduce((a, w) => a + w, 0);
    if (total <= 0) return "DELIVRD";
    let roll = this.random() * total;
    for (const [i, w] of weights.entries()) {
      roll -= w;
      if (roll < 0) return RECEIPT_STATS[i] ?? "DELIVRD";
    }
    return "DELIVRD";
  }

  private sendReceipt(d: Delivery): void {
    if (this.stopped) return;
    const conn =
      d.preferred.bound && !d.preferred.closed ? d.preferred : [...this.conns].find((c) => c.bound);
    if (!conn) {
      this.undelivered.push(d);
      if (this.undelivered.length > 100_000) this.undelivered.shift();
      return;
    }
    d.preferred = conn;
    const pdu = new smpp.PDU("deliver_sm", d.fields);
    if (!conn.session.send(pdu)) {
      this.retryReceipt(d);
      return;
    }
    const sent: SentReceipt = {
      receiptId: d.receiptId,
      stat: d.stat,
      attempt: d.attempt,
      at: new Date(),
    };
    conn.receipts.set(pdu.sequence_number, { delivery: d, sent });
    this.receiptsSent.push(sent);
    this.trim(this.receiptsSent);
  }

  private onDeliverSmResp(conn: Conn, pdu: PDU): void {
    const pending = conn.receipts.get(pdu.sequence_number);
    if (!pending) return;
    conn.receipts.delete(pdu.sequence_number);
    const d = pending.delivery;
    pending.sent.command_status = pdu.command_status;
    if (pdu.command_status !== STATUS.ROK) {
      this.retryReceipt(d);
      return;
    }
    if (d.duplicates > 0) {
      d.duplicates--;
      this.sendReceipt({ ...d, attempt: 1 });
    }
  }

  private retryReceipt(d: Delivery): void {
    if (d.attempt >= this.behaviourNow.maxReceiptAttempts) {
      this.log.warn({ operator: this.options.name, id: d.receiptId }, "receipt given up");
      return;
    }
    this.schedule(
      () => this.sendReceipt({ ...d, attempt: d.attempt + 1 }),
      this.behaviourNow.receiptRetryDelayMs,
    );
  }
}
