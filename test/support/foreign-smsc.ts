/**
 * An SMSC for tests that owes nothing to carriers/simulator: plain SMPP 3.4 on node-smpp's server,
 * answering every submit_sm with ESME_ROK and sending a DELIVRD receipt per segment, with ids
 * written the way a given carrier writes them. It records every submit_sm (destination, part,
 * the id it answered) so a test can say "every destination was submitted exactly once".
 *
 * What can be chosen: how ids are written in submit_sm_resp and in the receipt, independently;
 * where the receipt carries its id (the text's `id:`, the receipted_message_id TLV, or both) and
 * in whose style the TLV writes it; whether the receipt comes back on the session that submitted
 * or on another bound session of the same system_id; refusing binds (ESME_RBINDFAIL), switchable
 * while running; per destination, the id answered, no receipt, or the receipt before the answer;
 * and receipts of the test's own making, sent at will (`sendReceipt`).
 */
import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import smpp, { type PDU, type Session } from "smpp";

/**
 * How one SMSC writes an id. Every form is derived from one number per submit, so an answer and
 * its receipt name the same submit however each is written:
 * - base36: the number in base 36 (`8rz4jk1a`), an opaque string;
 * - uuid: a UUID derived from the number; hex64: 64 lower-case hex characters (a hash);
 * - decimal / hex (lower case) / hex-upper: the number itself;
 * - hex-upper-padded: upper-case hex, zero-padded to 16 characters;
 * - empty: no id at all; too-long: 76 characters, past SMPP's 65.
 */
export const ID_FORMS = [
  "base36",
  "uuid",
  "hex64",
  "decimal",
  "hex",
  "hex-upper",
  "hex-upper-padded",
  "empty",
  "too-long",
] as const;
export type IdForm = (typeof ID_FORMS)[number];

/** Where a receipt carries its id: the Appendix B text's `id:`, the receipted_message_id TLV, or both. */
export type ReceiptIdPlace = "text" | "tlv" | "both";

export interface ForeignSmscOptions {
  /** How ids are written in submit_sm_resp and in receipts; default a UUID in both. */
  ids?: { answer: IdForm; receipt: IdForm };
  /** Default both. */
  receiptIdIn?: ReceiptIdPlace;
  /**
   * In whose style receipted_message_id writes the id: the receipt's (default, as many gateways
   * do) or the answer's (as SMPP 3.4 5.3.2.12 says).
   */
  tlvStyle?: "receipt" | "answer";
  /**
   * The receipt's text when the id is in the TLV only: none (an empty short_message) or a layout
   * of this SMSC's own that no Appendix B reader understands (`MSGID=…;STATUS=0;DONE=…`).
   */
  tlvOnlyText?: "none" | "own";
  /** The session that submitted (default) or another bound session of the same system_id. */
  receiptSession?: "same" | "other";
  /** Delay between the submit_sm_resp and its receipt; default 0 (right behind the answer). */
  receiptDelayMs?: number;
  /** Refuse binds from the start (setRefuseBinds switches it later). */
  refuseBinds?: boolean;
  /** system_id in bind_transceiver_resp. */
  name?: string;
  /** Called on each session right after it is bound: an SMSC's own requests (enquire_link, MO). */
  afterBind?: (session: Session) => void;
  /**
   * Per submit, by its destination: the id to answer (and receipt) with instead of the `ids` form,
   * whether to send its receipt (default yes), and how long after its receipt to answer (the
   * receipt overtakes the submit_sm_resp).
   */
  script?: (destination: string) => ScriptedSubmit | undefined;
}

/** What `script` may say of one submit. */
export interface ScriptedSubmit {
  answerId?: string;
  receipt?: boolean;
  answerAfterReceiptMs?: number;
  /**
   * Answer ESME_ROK with these raw octets as the submit_sm_resp's body (say, a message_id with no
   * NUL), framed with a correct command_length.
   */
  answerBody?: Buffer;
  /** Raw octets written just before the submit_sm_resp, in the same write (say, a large PDU). */
  beforeAnswer?: Buffer;
}

/** One submit_sm as this SMSC received and answered it. */
export interface ForeignSubmit {
  destination: string;
  /** From the UDH or the SAR TLVs; 1 for a message in one segment. */
  part: number;
  /** The id written in submit_sm_resp. */
  answeredId: string;
  /** The id written in its receipt (text or TLV, as the options say). */
  receiptId: string;
  /** The bind's system_id and the session it came on (1, 2, … in bind order). */
  systemId: string;
  session: number;
}

/** One receipt sent: on which session, for which submit, and the deliver_sm_resp status. */
export interface ForeignReceipt {
  submit: ForeignSubmit;
  session: number;
  /** Undefined until answered. */
  commandStatus?: number;
}

export interface ForeignSmsc {
  start(): Promise<number>;
  stop(): Promise<void>;
  readonly submits: readonly ForeignSubmit[];
  readonly receipts: readonly ForeignReceipt[];
  /** submit_sm per "destination#part". */
  submitsPerDestination(): Map<string, number>;
  /** The "destination#part" keys submitted more than once. */
  submittedMoreThanOnce(): string[];
  /** Binds answered ESME_ROK, and refused. */
  readonly binds: { accepted: number; refused: number };
  /** Each bind's command (bind_transceiver, bind_transmitter, bind_receiver), in order. */
  readonly bindCommands: readonly string[];
  /** Sessions bound now, of one system_id or of any. */
  boundSessions(systemId?: string): number;
  setRefuseBinds(refuse: boolean): void;
  /** Cut every connection, as a network blip or an SMSC restart would. */
  dropConnections(): void;
  /**
   * A receipt of the test's making (Appendix B text and TLVs) on a bound session (of `systemId`
   * when given), from `handset`; resolves with the deliver_sm_resp's command_status.
   */
  sendReceipt(receipt: {
    id: string;
    /** What follows `stat:`: a state SMPP 3.4 names, or whatever a carrier writes. */
    stat: string;
    handset: string;
    systemId?: string;
    /** Default 0x04, a delivery receipt; 0 is a plain message's type. */
    esmClass?: number;
    /** Also the receipted_message_id and message_state TLVs (default: the text only). */
    tlvs?: boolean;
  }): Promise<number>;
}

const STATUS = { ROK: 0x00, RINVCMDID: 0x03, RINVBNDSTS: 0x04, RBINDFAIL: 0x0d } as const;
const ESM_CLASS_DELIVERY_RECEIPT = 0x04;
const MESSAGE_STATE_DELIVERED = 2;
const MESSAGE_STATE_UNDELIVERABLE = 5;
const UDH_CONCAT_8BIT = 0x00;
const UDH_CONCAT_16BIT = 0x08;
const BINDS = new Set(["bind_transceiver", "bind_transmitter", "bind_receiver"]);
/** registered_delivery bits 0-1: 1 = a receipt on any final state, 2 = on failure only. */
const RECEIPT_REQUEST_MASK = 0x03;

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number => (typeof v === "number" ? v : 0);

/** The id of the submit numbered `value`, written in `form`. */
export function writeId(value: bigint, form: IdForm): string {
  const hash = () => createHash("sha256").update(`foreign-smsc:${value}`).digest("hex");
  switch (form) {
    case "base36":
      return value.toString(36);
    case "uuid": {
      const h = hash();
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
    }
    case "hex64":
      return hash();
    case "decimal":
      return value.toString(10);
    case "hex":
      return value.toString(16);
    case "hex-upper":
      return value.toString(16).toUpperCase();
    case "hex-upper-padded":
      return value.toString(16).toUpperCase().padStart(16, "0");
    case "empty":
      return "";
    case "too-long":
      return `${hash()}-${value.toString(36)}`;
  }
}

/** The segment number of a submit: its UDH concatenation element or SAR TLV, else 1. */
function partOf(pdu: PDU): number {
  const sar = num(pdu.sar_segment_seqnum);
  if (sar > 0) return sar;
  const sm = pdu.short_message;
  const udh: unknown = typeof sm === "object" && sm !== null && "udh" in sm ? sm.udh : undefined;
  for (const ie of Array.isArray(udh) ? udh : []) {
    if (!Buffer.isBuffer(ie)) continue;
    if (ie[0] === UDH_CONCAT_8BIT && ie.length >= 5) return ie.readUInt8(4);
    if (ie[0] === UDH_CONCAT_16BIT && ie.length >= 6) return ie.readUInt8(5);
  }
  return 1;
}

/** YYMMDDhhmm in UTC, SMPP 3.4 Appendix B's date form. */
function receiptDate(at: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(at.getUTCFullYear() % 100)}${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}`;
}

interface Bound {
  number: number;
  session: Session;
  systemId: string;
  bound: boolean;
}

export function startForeignSmsc(options: ForeignSmscOptions = {}): ForeignSmsc {
  const ids = options.ids ?? { answer: "uuid", receipt: "uuid" };
  const receiptIdIn = options.receiptIdIn ?? "both";
  const tlvStyle = options.tlvStyle ?? "receipt";
  const receiptSession = options.receiptSession ?? "same";
  let refuseBinds = options.refuseBinds ?? false;
  const submits: ForeignSubmit[] = [];
  const receipts: ForeignReceipt[] = [];
  const binds = { accepted: 0, refused: 0 };
  const bindCommands: string[] = [];
  const sessions = new Set<Bound>();
  const timers = new Set<NodeJS.Timeout>();
  /** Receipts waiting for a session to carry them (none bound, or no other one yet). */
  const waiting: { submit: ForeignSubmit; pdu: PDU }[] = [];
  // Numbers start with hex digit a, so every hex id holds a letter and reads as no decimal one.
  let next = 0xa0_0000_0000n + BigInt(Math.floor(Math.random() * 2 ** 32));
  let sessionNumbers = 0;
  let stopped = false;

  const perDestination = () => {
    const counts = new Map<string, number>();
    for (const s of submits) {
      const key = `${s.destination}#${s.part}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return counts;
  };

  const carrierFor = (submit: ForeignSubmit): Bound | undefined => {
    const live = [...sessions].filter((s) => s.bound && s.systemId === submit.systemId);
    if (receiptSession === "other") return live.find((s) => s.number !== submit.session);
    return live.find((s) => s.number === submit.session) ?? live[0];
  };

  const deliver = (submit: ForeignSubmit, pdu: PDU) => {
    if (stopped) return;
    const carrier = carrierFor(submit);
    if (!carrier) {
      waiting.push({ submit, pdu });
      return;
    }
    const sent: ForeignReceipt = { submit, session: carrier.number };
    const ok = carrier.session.send(new smpp.PDU("deliver_sm", receiptFields(submit, pdu)), (resp: PDU) => {
      sent.commandStatus = resp.command_status;
    });
    if (ok) receipts.push(sent);
    else waiting.push({ submit, pdu });
  };

  const receiptFields = (submit: ForeignSubmit, pdu: PDU) => {
    const now = receiptDate(new Date());
    const appendixB = `id:${submit.receiptId} sub:001 dlvrd:001 submit date:${now} done date:${now} stat:DELIVRD err:000 text:`;
    const text =
      receiptIdIn !== "tlv"
        ? appendixB
        : options.tlvOnlyText === "own"
          ? `MSGID=${submit.receiptId};STATUS=0;DONE=${Date.now()}`
          : "";
    return {
      // A receipt travels back: from the handset (the original destination) to the sender.
      source_addr_ton: num(pdu.dest_addr_ton),
      source_addr_npi: num(pdu.dest_addr_npi),
      source_addr: submit.destination,
      dest_addr_ton: num(pdu.source_addr_ton),
      dest_addr_npi: num(pdu.source_addr_npi),
      destination_addr: str(pdu.source_addr),
      esm_class: ESM_CLASS_DELIVERY_RECEIPT,
      data_coding: 0,
      short_message: text,
      ...(receiptIdIn === "text"
        ? {}
        : {
            receipted_message_id: tlvStyle === "answer" ? submit.answeredId : submit.receiptId,
            message_state: MESSAGE_STATE_DELIVERED,
          }),
    };
  };

  const onSubmit = (bound: Bound, pdu: PDU) => {
    if (!bound.bound) {
      bound.session.send(pdu.response({ command_status: STATUS.RINVBNDSTS }));
      return;
    }
    const value = next++;
    const script = options.script?.(str(pdu.destination_addr));
    const submit: ForeignSubmit = {
      destination: str(pdu.destination_addr),
      part: partOf(pdu),
      answeredId: script?.answerId ?? writeId(value, ids.answer),
      receiptId: script?.answerId ?? writeId(value, ids.receipt),
      systemId: bound.systemId,
      session: bound.number,
    };
    submits.push(submit);
    const answer = () => {
      if (script?.beforeAnswer) {
        const resp = pdu.response({ message_id: submit.answeredId }).toBuffer();
        bound.session.socket.write(Buffer.concat([script.beforeAnswer, resp]));
        return;
      }
      if (script?.answerBody) {
        const header = Buffer.alloc(16);
        header.writeUInt32BE(16 + script.answerBody.length, 0);
        header.writeUInt32BE(0x80000004, 4);
        header.writeUInt32BE(0, 8);
        header.writeUInt32BE(num(pdu.sequence_number), 12);
        bound.session.socket.write(Buffer.concat([header, script.answerBody]));
        return;
      }
      bound.session.send(pdu.response({ message_id: submit.answeredId }));
    };
    const wanted = (num(pdu.registered_delivery) & RECEIPT_REQUEST_MASK) !== 0 && script?.receipt !== false;
    if (script?.answerAfterReceiptMs !== undefined) {
      if (wanted) deliver(submit, pdu);
      later(answer, script.answerAfterReceiptMs);
      return;
    }
    answer();
    if (wanted) later(() => deliver(submit, pdu), options.receiptDelayMs ?? 0);
  };

  const later = (run: () => void, ms: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) run();
    }, ms);
    timers.add(timer);
  };

  const onBind = (bound: Bound, pdu: PDU) => {
    bindCommands.push(pdu.command);
    if (refuseBinds) {
      binds.refused++;
      bound.session.send(pdu.response({ command_status: STATUS.RBINDFAIL }), () => bound.session.close());
      return;
    }
    binds.accepted++;
    bound.bound = true;
    bound.systemId = str(pdu.system_id);
    bound.session.send(pdu.response({ system_id: options.name ?? "foreign" }));
    options.afterBind?.(bound.session);
    // A new session may be the one a held receipt was waiting for.
    for (const held of waiting.splice(0)) deliver(held.submit, held.pdu);
  };

  const server = smpp.createServer({}, (session: Session) => {
    const bound: Bound = { number: ++sessionNumbers, session, systemId: "", bound: false };
    sessions.add(bound);
    session.socket.setNoDelay(true);
    // A framing error stalls a node-smpp session: drop it, as the ESME will reconnect.
    session.on("error", () => session.destroy());
    session.on("close", () => {
      bound.bound = false;
      sessions.delete(bound);
    });
    session.on("pdu", (pdu: PDU) => {
      if (BINDS.has(pdu.command)) onBind(bound, pdu);
      else if (pdu.command === "submit_sm") onSubmit(bound, pdu);
      else if (pdu.command === "enquire_link") session.send(pdu.response());
      else if (pdu.command === "unbind") {
        bound.bound = false;
        session.send(pdu.response(), () => session.close());
      } else if (!pdu.isResponse()) session.send(pdu.response({ command_status: STATUS.RINVCMDID }));
    });
  });

  return {
    submits,
    receipts,
    binds,
    bindCommands,
    async start() {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () => {
          server.off("error", reject);
          resolve();
        });
      });
      return (server.address() as AddressInfo).port;
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const s of sessions) s.session.destroy();
      if (!server.listening) return;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    submitsPerDestination: perDestination,
    submittedMoreThanOnce: () => [...perDestination()].filter(([, n]) => n > 1).map(([key]) => key),
    boundSessions: (systemId) =>
      [...sessions].filter((s) => s.bound && (systemId === undefined || s.systemId === systemId)).length,
    setRefuseBinds(refuse) {
      refuseBinds = refuse;
    },
    dropConnections() {
      for (const s of sessions) s.session.destroy();
    },
    sendReceipt({ id, stat, handset, systemId, esmClass = ESM_CLASS_DELIVERY_RECEIPT, tlvs = false }) {
      const carrier = [...sessions].find(
        (s) => s.bound && (systemId === undefined || s.systemId === systemId),
      );
      if (!carrier) return Promise.reject(new Error("no bound session to send the receipt on"));
      const now = receiptDate(new Date());
      const pdu = new smpp.PDU("deliver_sm", {
        source_addr_ton: 1,
        source_addr_npi: 1,
        source_addr: handset,
        dest_addr_ton: 5,
        dest_addr_npi: 0,
        destination_addr: "SHIRI",
        esm_class: esmClass,
        data_coding: 0,
        short_message: `id:${id} sub:001 dlvrd:000 submit date:${now} done date:${now} stat:${stat} err:000 text:`,
        ...(tlvs
          ? {
              receipted_message_id: id,
              message_state: stat === "DELIVRD" ? MESSAGE_STATE_DELIVERED : MESSAGE_STATE_UNDELIVERABLE,
            }
          : {}),
      });
      return new Promise((resolve) => carrier.session.send(pdu, (resp: PDU) => resolve(resp.command_status)));
    },
  };
}
