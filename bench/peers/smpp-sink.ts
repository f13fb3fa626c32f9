/**
 * A plain SMPP 3.4 SMSC for the whole-pipeline bench, in a process of its own: it answers every
 * bind, enquire_link and submit_sm at once, sends one DELIVRD delivery receipt per submit_sm right
 * after its submit_sm_resp, and counts submits per destination and part. Not carriers/simulator:
 * no failure modes, no records of texts, nothing but what a fast carrier does. With
 * --answer-delay-ms it is a carrier at a distance instead: each submit_sm_resp (and its receipt)
 * leaves that long after its submit_sm, so one bind carries at most its window per delay.
 *
 *   node --import tsx bench/peers/smpp-sink.ts [--port 2775] [--http-port 0] [--tlv-id submit|receipt|probe]
 *     [--answer-delay-ms 0] [--ids numeric|opaque]   (sink-ids.ts; numeric unless given)
 *
 * It prints one JSON line on stdout once listening: {"smpp_port":…,"http_port":…}. The HTTP
 * endpoint (loopback only) serves GET /counts[?summary], POST /reset (counts back to zero) and
 * POST /mode?tlv=… (see sink-ids.ts). Stops on SIGTERM or SIGINT, and when the process that
 * forked it goes away.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import smpp, { type PDU, type Session } from "smpp";
import {
  FIRST_ID,
  ID_FORMS,
  type IdForm,
  opaqueId,
  receiptedMessageId,
  receiptTextId,
  submitId,
  TLV_MODES,
  type TlvMode,
} from "./sink-ids.ts";

/** What GET /counts answers. */
export interface SinkCounts {
  submits: number;
  /** submit_sm per "destination#part" (part 1 for a message in one segment). */
  per_destination_part: Record<string, number>;
  receipts_sent: number;
  /** deliver_sm_resp with a non-zero status, and receipts that could not be written. */
  receipts_refused: number;
  receipts_unsent: number;
  receipts_acknowledged: number;
  binds: number;
  sessions: number;
  tlv_mode: TlvMode;
}

const ESM_CLASS_DELIVERY_RECEIPT = 0x04;
const MESSAGE_STATE_DELIVERED = 2;
const UDH_CONCAT_8BIT = 0x00;
const UDH_CONCAT_16BIT = 0x08;
const BINDS = new Set(["bind_transceiver", "bind_transmitter", "bind_receiver"]);

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number => (typeof v === "number" ? v : 0);

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

function textOf(pdu: PDU): string {
  const sm = pdu.short_message;
  const message: unknown = typeof sm === "object" && sm !== null && "message" in sm ? sm.message : "";
  return typeof message === "string" ? message : "";
}

/** YYMMDDhhmm in UTC, SMPP 3.4 Appendix B's date form. */
function receiptDate(at: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(at.getUTCFullYear() % 100)}${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}`;
}

export interface Sink {
  smppPort: number;
  httpPort: number;
  counts(): SinkCounts;
  stop(): Promise<void>;
}

export async function startSink(opts: {
  host?: string;
  port: number;
  httpPort: number;
  tlvMode: TlvMode;
  answerDelayMs?: number;
  ids?: IdForm;
}): Promise<Sink> {
  const opaque = opts.ids === "opaque";
  const host = opts.host ?? "127.0.0.1";
  let tlvMode = opts.tlvMode;
  let next = FIRST_ID;
  let counts = fresh();
  function fresh() {
    return {
      submits: 0,
      perKey: new Map<string, number>(),
      receipts_sent: 0,
      receipts_refused: 0,
      receipts_unsent: 0,
      receipts_acknowledged: 0,
      binds: 0,
      sessions: 0,
    };
  }

  const onSubmit = (session: Session, pdu: PDU) => {
    const n = next++;
    const destination = str(pdu.destination_addr);
    const key = `${destination}#${partOf(pdu)}`;
    counts.submits++;
    counts.perKey.set(key, (counts.perKey.get(key) ?? 0) + 1);
    if (opts.answerDelayMs) setTimeout(() => answerSubmit(session, pdu, n, destination), opts.answerDelayMs);
    else answerSubmit(session, pdu, n, destination);
  };

  /** The submit_sm_resp, then the submit's DELIVRD receipt. */
  const answerSubmit = (session: Session, pdu: PDU, n: bigint, destination: string) => {
    session.send(pdu.response({ message_id: opaque ? opaqueId(n) : submitId(n) }));
    const now = receiptDate(new Date());
    const text = textOf(pdu)
      .slice(0, 20)
      .replace(/[^A-Za-z0-9 .,!?'()+-]/g, "?");
    const receipt = new smpp.PDU("deliver_sm", {
      // A receipt travels back: from the handset (the original destination) to the sender.
      source_addr_ton: num(pdu.dest_addr_ton),
      source_addr_npi: num(pdu.dest_addr_npi),
      source_addr: destination,
      dest_addr_ton: num(pdu.source_addr_ton),
      dest_addr_npi: num(pdu.source_addr_npi),
      destination_addr: str(pdu.source_addr),
      esm_class: ESM_CLASS_DELIVERY_RECEIPT,
      data_coding: 0,
      short_message: `id:${opaque ? opaqueId(n) : receiptTextId(n)} sub:001 dlvrd:001 submit date:${now} done date:${now} stat:DELIVRD err:000 text:${text}`,
      receipted_message_id: opaque ? opaqueId(n) : receiptedMessageId(n, tlvMode, destination),
      message_state: MESSAGE_STATE_DELIVERED,
    });
    if (session.send(receipt)) counts.receipts_sent++;
    else counts.receipts_unsent++;
  };

  const server = smpp.createServer();
  server.on("session", (session) => {
    counts.sessions++;
    session.socket.setNoDelay(true);
    session.on("error", () => session.destroy());
    session.on("pdu", (pdu) => {
      if (BINDS.has(pdu.command)) {
        counts.binds++;
        session.send(pdu.response({ system_id: "bench-sink" }));
      } else if (pdu.command === "submit_sm") onSubmit(session, pdu);
      else if (pdu.command === "deliver_sm_resp") {
        if (pdu.command_status === 0) counts.receipts_acknowledged++;
        else counts.receipts_refused++;
      } else if (pdu.command === "unbind") session.send(pdu.response(), () => session.close());
      else if (!pdu.isResponse()) session.send(pdu.response());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => resolve());
  });

  const report = (summary = false): SinkCounts => ({
    submits: counts.submits,
    per_destination_part: summary ? {} : Object.fromEntries(counts.perKey),
    receipts_sent: counts.receipts_sent,
    receipts_refused: counts.receipts_refused,
    receipts_unsent: counts.receipts_unsent,
    receipts_acknowledged: counts.receipts_acknowledged,
    binds: counts.binds,
    sessions: counts.sessions,
    tlv_mode: tlvMode,
  });

  const control = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://sink");
    req.resume();
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    // ?summary leaves out the per-destination counts (cheap enough to poll).
    if (req.method === "GET" && url.pathname === "/counts")
      return answer(200, report(url.searchParams.has("summary")));
    if (req.method === "POST" && url.pathname === "/reset") {
      const { binds, sessions } = counts;
      counts = { ...fresh(), binds, sessions };
      return answer(200, { ok: true });
    }
    const mode = url.searchParams.get("tlv");
    if (req.method === "POST" && url.pathname === "/mode" && TLV_MODES.some((m) => m === mode)) {
      tlvMode = mode as TlvMode;
      return answer(200, { tlv_mode: tlvMode });
    }
    answer(404, { error: "GET /counts, POST /reset, POST /mode?tlv=submit|receipt|probe" });
  });
  await new Promise<void>((resolve, reject) => {
    control.once("error", reject);
    control.listen(opts.httpPort, "127.0.0.1", () => resolve());
  });

  return {
    smppPort: (server.address() as AddressInfo).port,
    httpPort: (control.address() as AddressInfo).port,
    counts: () => report(),
    async stop() {
      for (const s of server.sessions ?? []) s.destroy();
      control.closeAllConnections();
      await Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        new Promise<void>((resolve) => control.close(() => resolve())),
      ]);
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "2775" },
      "http-port": { type: "string", default: "0" },
      "tlv-id": { type: "string", default: "receipt" },
      "answer-delay-ms": { type: "string", default: "0" },
      ids: { type: "string", default: "numeric" },
    },
    strict: true,
  });
  const mode = values["tlv-id"];
  if (!TLV_MODES.some((m) => m === mode)) throw new Error(`--tlv-id must be one of ${TLV_MODES.join(", ")}`);
  const ids = ID_FORMS.find((f) => f === values.ids);
  if (!ids) throw new Error(`--ids must be one of ${ID_FORMS.join(", ")}`);
  const sink = await startSink({
    host: values.host,
    port: Number(values.port),
    httpPort: Number(values["http-port"]),
    tlvMode: mode as TlvMode,
    answerDelayMs: Number(values["answer-delay-ms"]),
    ids,
  });
  process.stdout.write(`${JSON.stringify({ smpp_port: sink.smppPort, http_port: sink.httpPort })}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void sink.stop().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // Forked by the bench: gone with it, whatever way it ended.
  process.on("disconnect", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`smpp sink: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
