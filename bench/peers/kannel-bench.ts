/**
 * Kannel 1.4.5 beside Shiri's whole-pipeline scenarios (bench/peers/kannel.md), in one command:
 * the SMPP sink, bearerbox and smsbox on a tuned configuration generated in a fresh temporary
 * directory (the file store on), a delivery-report receiver in this process, and the load
 * generator sending GET /cgi-bin/sendsms, each request to new recipients, one dlr-url a message.
 *
 *   node --import tsx bench/peers/kannel-bench.ts [--messages 20000] [--connections 50] [--timeout 300]
 *     [--warmup 10000]             (messages sent as the load sends them before it, not measured;
 *                                 none unless given: warm-up.ts)
 *     [--sink-ids opaque|numeric]   (the sink's message ids, sink-ids.ts: opaque, as issue 27
 *                                 compared, unless given; numeric sets Kannel's msg-id-type)
 *     [--per-request 1]          (recipients a sendsms request, space-separated in `to`: 100 for the
 *                                 bulk comparison, with --connections 10)
 *     [--smsbox-max-pending N]   (bearerbox's window of reports and replies towards smsbox; Kannel's
 *                                 default, 100, unless given)
 *
 * Prints a table on stderr and the result as JSON on stdout; exits 1 when a message went missing
 * or came back twice, 2 when the run timed out. Whatever way it ends, it stops the processes it
 * started by their pids and removes its directory. Loopback only: Kannel's usual ports and the
 * sink's (PORTS, checked free first; Shiri's bench takes ephemeral ports only).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { cpuSeconds } from "../dispatch-lib/cpu.ts";
import { percentile } from "../dispatch-lib/stats.ts";
import { Cleanup } from "../lib/cleanup.ts";
import { markdownTable, round } from "../lib/report.ts";
import { stopChild } from "../lib/shiri-process.ts";
import { tallyShortfalls } from "../pipeline/completeness.ts";
import { startPeer } from "../pipeline/peer-process.ts";
import { remoteReceiver } from "../pipeline/remote-receiver.ts";
import { startSinkPeer } from "../pipeline/sink-peer.ts";
import {
  digits,
  FIRST_SUBSCRIBER,
  type LoadPlan,
  type LoadResult,
  MESSAGE,
  recipient,
  SENDER,
  sendsmsPath,
} from "./load-protocol.ts";
import { ID_FORMS, type IdForm } from "./sink-ids.ts";
import { warmUp } from "./warm-up.ts";

const PORTS = { admin: 13000, smsbox: 13001, sendsms: 13013, smpp: 2775 } as const;
/** The tuned settings (issue 27): submits in flight on the bind, dlr-url fetches under way. */
const MAX_PENDING_SUBMITS = 100;
const SMSBOX_MAX_PENDING_REQUESTS = 512;
/**
 * The probe's recipient; otherwise the pipeline scenario's sender, text and recipients (SENDER,
 * MESSAGE, FIRST_SUBSCRIBER in load-protocol.ts).
 */
const PROBE_SUBSCRIBER = 0;
const SENDSMS_USER = "bench";
/** How long to keep listening after the last expected report, for duplicates. */
const GRACE_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => process.stderr.write(`${line}\n`);

/** Steps undone in reverse order on the way out, whatever way the run ends. */
const cleanup = new Cleanup();

/** bearerbox or smsbox in the foreground (no -d), so its pid is the one to stop. */
interface Box {
  name: string;
  pid: number;
  exited(): boolean;
  /** What it wrote lately (warnings and up) and the tail of its log file, for error reports. */
  output(): string;
  stop(): Promise<void>;
}

function kannelBinary(name: string): string {
  // Debian installs the boxes in /usr/sbin, not on every user's PATH.
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/usr/local/sbin"];
  for (const dir of dirs) {
    const file = dir ? path.join(dir, name) : "";
    if (file && existsSync(file)) return file;
  }
  throw new Error(`${name} not found: install Kannel 1.4.5 (Debian bookworm: apt-get install kannel)`);
}

function startBox(name: "bearerbox" | "smsbox", conf: string, dir: string): Box {
  // -v 2: warnings and up on stderr (the default is every debug line, which costs the CPU measured).
  const child: ChildProcess = spawn(kannelBinary(name), ["-v", "2", conf], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const logFile = path.join(dir, `${name}.log`);
  return {
    name,
    pid: child.pid,
    exited,
    output() {
      const log = existsSync(logFile) ? readFileSync(logFile, "utf8").slice(-4_000) : "";
      return `${output}${log ? `\n--- ${name}.log ---\n${log}` : ""}`;
    },
    stop: () => stopChild(child, 15_000),
  };
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * Kannel's configuration as a high-volume operator tunes it (issue 27; the why of each setting in
 * docs/decisions/0012-kannel-comparison.md): one SMPP bind to the sink with 100 submits in flight,
 * no throughput cap, delivery reports kept in memory, accepted messages in the file store, smsbox
 * fetching up to 512 dlr-urls at once. Logs at warning level, as Shiri's processes run in the
 * bench (LOG_LEVEL=warn), and no access log. Kannel refuses a field its group does not know
 * ("Group 'smsbox' may not contain field …") and does not start, so every name here is read.
 */
function kannelConf(dir: string, secret: string, smsboxMaxPending: number | null, sinkIds: IdForm): string {
  const q = (s: string) => `"${s}"`;
  return `group = core
admin-port = ${PORTS.admin}
admin-interface = 127.0.0.1
admin-password = ${q(secret)}
status-password = ${q(secret)}
admin-allow-ip = "127.0.0.1"
smsbox-port = ${PORTS.smsbox}
smsbox-interface = 127.0.0.1
box-allow-ip = "127.0.0.1"
${smsboxMaxPending === null ? "" : `smsbox-max-pending = ${smsboxMaxPending}\n`}log-file = ${q(path.join(dir, "bearerbox.log"))}
log-level = 2
# Kannel's own durable queue, as Shiri's is Postgres: every message accepted is written to this
# file before smsbox answers the request.
store-type = file
store-location = ${q(path.join(dir, "kannel.store"))}
dlr-storage = internal

group = smsc
smsc = smpp
smsc-id = sink
host = 127.0.0.1
port = ${PORTS.smpp}
transceiver-mode = true
smsc-username = shiri
smsc-password = econet1
# Kannel refuses to start an SMPP connection without one; the sink ignores it.
system-type = ""
# 100 submits in flight on one bind (Kannel's default is 10). No throughput cap (Kannel has none
# unless one is set).
max-pending-submits = ${MAX_PENDING_SUBMITS}
${
  sinkIds === "numeric"
    ? `# The sink's numeric ids (bench/peers/sink-ids.ts): hex in submit_sm_resp (bit 0 set), decimal
# in the receipt (bit 1 clear), and the receipted_message_id TLV in the receipt's form
# (--tlv-id receipt). Opaque ids need nothing: unset, Kannel compares them as strings.
msg-id-type = 0x01
`
    : ""
}source-addr-ton = 5
source-addr-npi = 0
dest-addr-ton = 1
dest-addr-npi = 1

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = ${PORTS.smsbox}
sendsms-port = ${PORTS.sendsms}
sendsms-interface = 127.0.0.1
log-file = ${q(path.join(dir, "smsbox.log"))}
log-level = 2
# dlr-url fetches (and MO requests) smsbox keeps under way at once.
max-pending-requests = ${SMSBOX_MAX_PENDING_REQUESTS}

group = sendsms-user
username = ${SENDSMS_USER}
password = ${q(secret)}
`;
}

async function getText(url: string): Promise<{ status: number; text: string } | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, text: await res.text() };
  } catch {
    return null;
  }
}

interface Options {
  messages: number;
  connections: number;
  /** Recipients a sendsms request (1: single sends; 100: the bulk comparison). */
  perRequest: number;
  /** The sink's message ids (sink-ids.ts). */
  sinkIds: IdForm;
  /** Kannel's smsbox-max-pending, or null for its default (100). */
  smsboxMaxPending: number | null;
  /** Messages sent as the load sends them before it, not measured (warm-up.ts). */
  warmUpMessages: number;
}

async function run(
  { messages, connections, perRequest, sinkIds, smsboxMaxPending, warmUpMessages }: Options,
  phase: { now: string },
): Promise<boolean> {
  for (const [name, port] of Object.entries(PORTS))
    if (!(await portFree(port)))
      throw new Error(`port ${port} (${name}) is taken on 127.0.0.1: another Kannel or sink running?`);

  const dir = mkdtempSync(path.join(os.tmpdir(), "kannel-bench-"));
  cleanup.add(async () => rmSync(dir, { recursive: true, force: true }));
  // A fresh secret each run: the admin page and sendsms are only on loopback, but need one anyway.
  const secret = `b${Math.random().toString(36).slice(2, 12)}`;
  const conf = path.join(dir, "kannel.conf");
  writeFileSync(conf, kannelConf(dir, secret, smsboxMaxPending, sinkIds));

  phase.now = "starting the sink";
  const sinkPeer = await startSinkPeer(cleanup, { port: PORTS.smpp, tlvId: "receipt", ids: sinkIds });
  const sinkProcess = sinkPeer.process;

  // The load process, and in it the reports' receiver (peers/callback-server.ts), as issue 27
  // measured: it sends nothing until told to start, after the probe.
  const plan: LoadPlan = {
    bases: [`http://127.0.0.1:${PORTS.sendsms}`],
    key: secret,
    from: SENDER,
    message: MESSAGE,
    mode: "sendsms",
    requests: Math.ceil(messages / perRequest),
    perRequest,
    inFlight: connections,
    firstSubscriber: FIRST_SUBSCRIBER,
    sendsms: { username: SENDSMS_USER },
    receiver: "dlr",
  };
  const loadProcess = startPeer("load generator", "../peers/load-generator.ts", [JSON.stringify(plan)]);
  cleanup.add(loadProcess.stop);
  const state: { responses: number; load: LoadResult | null } = { responses: 0, load: null };
  // dlr-mask=1 asks for "delivered" (type 1) only: any other type is a report not expected.
  const receiver = await remoteReceiver(loadProcess, "1", (m) => {
    if (m.type === "progress") state.responses = m.responses;
    else if (m.type === "result") state.load = m;
  });

  phase.now = "starting bearerbox and smsbox";
  const bearerbox = startBox("bearerbox", conf, dir);
  cleanup.add(bearerbox.stop);
  const status = () => getText(`http://127.0.0.1:${PORTS.admin}/status.txt?password=${secret}`);
  const boxes = [bearerbox];
  const alive = () => {
    for (const box of boxes) if (box.exited()) throw new Error(`${box.name} exited:\n${box.output()}`);
    if (sinkProcess.exited()) throw new Error(`the SMPP sink exited:\n${sinkProcess.output()}`);
  };
  const waitFor = async (what: string, timeoutMs: number, ready: () => Promise<boolean>) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await ready())) {
      alive();
      if (Date.now() > deadline)
        throw new Error(`${what} not within ${timeoutMs} ms:\n${boxes.map((b) => b.output()).join("\n")}`);
      await sleep(100);
    }
  };
  // smsbox gives up at once if bearerbox is not listening yet.
  await waitFor("bearerbox's admin page", 20_000, async () => (await status())?.status === 200);
  const smsbox = startBox("smsbox", conf, dir);
  cleanup.add(smsbox.stop);
  boxes.push(smsbox);

  phase.now = "waiting for the bind";
  let version = "unknown";
  await waitFor("the SMPP bind and smsbox", 30_000, async () => {
    const page = (await status())?.text ?? "";
    version = /bearerbox version `([^']+)'/.exec(page)?.[1] ?? version;
    const bound = /SMPP:127\.0\.0\.1:\d+\/\d+:[^\n]*\(online/.test(page);
    const smsboxOn = /smsbox:[^\n]*\(on-line/.test(page);
    // sendsms answers once smsbox is up (403 without credentials).
    const sendsms = (await getText(`http://127.0.0.1:${PORTS.sendsms}/cgi-bin/sendsms`)) !== null;
    return bound && smsboxOn && sendsms && (await sinkPeer.counts(true)).binds >= 1;
  });

  // One message through the whole path before the load: it fails fast, with Kannel's logs, when
  // the ids or the dlr-url are not understood, and opens the report connections.
  phase.now = "the probe message";
  const probeTo = recipient(PROBE_SUBSCRIBER);
  const probe = await getText(
    `http://127.0.0.1:${PORTS.sendsms}${sendsmsPath({
      username: SENDSMS_USER,
      password: secret,
      from: SENDER,
      to: [probeTo],
      text: MESSAGE,
      dlrUrl: receiver.url,
    })}`,
  );
  if (probe?.status !== 202)
    throw new Error(`the probe was refused: ${probe?.status} ${probe?.text}\n${smsbox.output()}`);
  await waitFor("the probe's delivery report", 15_000, async () => receiver.delivered.has(digits(probeTo)));
  phase.now = "the warm-up";
  await warmUp({
    plan,
    messages: warmUpMessages,
    dlrUrl: receiver.url,
    calledBack: (id) => receiver.delivered.has(id),
    alive,
  });
  await sinkPeer.reset();
  receiver.reset();

  // Measured from here.
  phase.now = "the load";
  const cpuBefore = { bearerbox: cpuSeconds(bearerbox.pid), smsbox: cpuSeconds(smsbox.pid) };
  const sinkCpuBefore = cpuSeconds(sinkProcess.pid);
  receiver.start();
  let lastSaid = performance.now();
  const load = await (async (): Promise<LoadResult> => {
    for (;;) {
      alive();
      const done = state.load;
      if (!done && loadProcess.exited())
        throw new Error(`the load generator ended without a result:\n${loadProcess.output()}`);
      if (
        done &&
        receiver.delivered.size >= done.accepted.length &&
        done.accepted.every(([id]) => receiver.delivered.has(id))
      )
        return done;
      if (performance.now() - lastSaid >= 2_000) {
        // The sink's submits tell whether the SMPP side or the report side is behind.
        const submitted = (await sinkPeer.counts(true)).submits;
        say(
          `  ${state.responses}/${plan.requests} requests answered, ${submitted} submitted, ${receiver.delivered.size} reports`,
        );
        lastSaid = performance.now();
      }
      await sleep(50);
    }
  })();
  // CPU up to the last report; then a grace period in which duplicates may still show.
  const used = (pid: number, before: number | null) =>
    (cpuSeconds(pid) ?? Number.NaN) - (before ?? Number.NaN);
  const bearerboxUsed = used(bearerbox.pid, cpuBefore.bearerbox);
  const smsboxUsed = used(smsbox.pid, cpuBefore.smsbox);
  const sinkUsed = used(sinkProcess.pid, sinkCpuBefore);
  phase.now = "the grace period";
  await sleep(GRACE_MS);
  const sink = await sinkPeer.counts();
  const page = (await status())?.text ?? "";

  // Completeness: every accepted request's destination submitted once, its report received once
  // (the tally of the pipeline scenario; the ids here are the recipients' digits).
  const { submits: count, callbacks: dlr } = tallyShortfalls({
    accepted: load.accepted,
    perDestinationPart: sink.per_destination_part,
    delivered: receiver.delivered,
  });
  const problems = {
    request_failures: load.failed,
    missing_submits: count.missing,
    duplicate_submits: count.duplicate,
    unexpected_submits: count.unexpected,
    missing_dlrs: dlr.missing,
    duplicate_dlrs: dlr.duplicate,
    unexpected_dlrs: dlr.unexpected,
    dlrs_not_delivered_type: [...receiver.byType]
      .filter(([type]) => type !== "1")
      .reduce((sum, [, n]) => sum + n, 0),
    unreadable_dlrs: receiver.unreadable,
  };
  const problemCount = Object.values(problems).reduce((a, n) => a + n, 0);

  // Per message: request sent → its first report, and request answered → its first report (the
  // pipeline scenario's callback latency is the latter).
  const fromSent: number[] = [];
  const fromAnswer: number[] = [];
  let lastReport = load.startedAtMs;
  for (const [id, , answeredAt] of load.accepted) {
    const first = receiver.delivered.get(id)?.[0];
    const sent = receiver.sentAt.get(id);
    if (first === undefined || sent === undefined) continue;
    fromSent.push(first - sent);
    fromAnswer.push(first - answeredAt);
    lastReport = Math.max(lastReport, first);
  }
  fromSent.sort((a, b) => a - b);
  fromAnswer.sort((a, b) => a - b);
  const reported = fromSent.length;
  const loadSeconds = (load.finishedAtMs - load.startedAtMs) / 1_000;
  const spanSeconds = (lastReport - load.startedAtMs) / 1_000;
  const perMessage = (seconds: number) =>
    Number.isFinite(seconds) && load.accepted.length > 0
      ? round((seconds * 1_000) / load.accepted.length, 3)
      : null;
  const ms = (sorted: number[], p: number) => (sorted.length ? round(percentile(sorted, p), 0) : null);

  const measures = {
    accepted_req_per_s: round(load.requests / loadSeconds, 0),
    accepted_msg_per_s: round(load.accepted.length / loadSeconds, 0),
    accept_p50_ms: load.latencyMs.p50,
    accept_p99_ms: load.latencyMs.p99,
    e2e_msg_per_s: reported > 0 && spanSeconds > 0 ? round(reported / spanSeconds, 0) : 0,
    dlr_p50_ms: ms(fromSent, 50),
    dlr_p99_ms: ms(fromSent, 99),
    dlr_after_answer_p50_ms: ms(fromAnswer, 50),
    dlr_after_answer_p99_ms: ms(fromAnswer, 99),
    cpu_kannel_ms_per_msg: perMessage(bearerboxUsed + smsboxUsed),
    cpu_bearerbox_ms_per_msg: perMessage(bearerboxUsed),
    cpu_smsbox_ms_per_msg: perMessage(smsboxUsed),
    cpu_sink_ms_per_msg: perMessage(sinkUsed),
    cpu_load_ms_per_msg: perMessage(load.cpuSeconds),
  };
  const planned = plan.requests * perRequest;
  const completeness = {
    complete: problemCount === 0 && load.accepted.length === planned,
    messages_planned: planned,
    messages_accepted: load.accepted.length,
    sink_submits: sink.submits,
    sink_submits_equal_messages: sink.submits === planned,
    sink_receipts_sent: sink.receipts_sent,
    sink_receipts_acknowledged: sink.receipts_acknowledged,
    dlr_ids_received: receiver.delivered.size,
    dlr_requests: receiver.requests,
    ...problems,
    // Messages still in Kannel's store, and reports it still waits for (both 0 when all is done).
    kannel_store_size_after: Number(/store size (\d+)/.exec(page)?.[1] ?? Number.NaN),
    kannel_dlrs_queued_after: Number(/DLR: (\d+) queued/.exec(page)?.[1] ?? Number.NaN),
  };
  const cpus = os.cpus();
  const result = {
    peer: `Kannel ${version} (bearerbox + smsbox)`,
    date: new Date().toISOString(),
    machine: `${cpus.length} × ${cpus[0]?.model ?? "unknown CPU"}, Node ${process.versions.node}`,
    settings: {
      messages: planned,
      requests: plan.requests,
      recipients_per_request: perRequest,
      in_flight: connections,
      first_request_to_last_answer_s: round(loadSeconds, 2),
      first_request_to_last_dlr_s: round(spanSeconds, 2),
      kannel: `one SMPP bind, max-pending-submits ${MAX_PENDING_SUBMITS}, no throughput cap, store-type file, dlr-storage internal, smsbox max-pending-requests ${SMSBOX_MAX_PENDING_REQUESTS}, smsbox-max-pending ${smsboxMaxPending ?? "100 (default)"}, log-level 2 on both boxes`,
      sink: `bench/peers/smpp-sink.ts --ids ${sinkIds} --tlv-id receipt (smpp ${PORTS.smpp})`,
      load: `bench/peers/load-generator.ts, mode sendsms (autocannon, GET /cgi-bin/sendsms, ${perRequest} recipient${perRequest > 1 ? "s" : ""} a request, dlr-mask=1)`,
      ...(load.failureSamples.length > 0 ? { failure_sample: load.failureSamples[0] ?? "" } : {}),
    },
    measures,
    completeness,
  };

  const show = (v: number | boolean | null) => (v === null ? "—" : String(v));
  say(
    markdownTable(
      ["Kannel, sendsms → sink → dlr-url", "value"],
      [
        ["accepted req/s (first request → last answer)", show(measures.accepted_req_per_s)],
        ["accepted msg/s (recipients)", show(measures.accepted_msg_per_s)],
        [
          "accept latency p50 / p99 (ms)",
          `${show(measures.accept_p50_ms)} / ${show(measures.accept_p99_ms)}`,
        ],
        ["end to end msg/s (first request → last DLR)", show(measures.e2e_msg_per_s)],
        [
          "DLR latency p50 / p99 (ms, request sent → DLR)",
          `${show(measures.dlr_p50_ms)} / ${show(measures.dlr_p99_ms)}`,
        ],
        [
          "DLR latency p50 / p99 (ms, request answered → DLR)",
          `${show(measures.dlr_after_answer_p50_ms)} / ${show(measures.dlr_after_answer_p99_ms)}`,
        ],
        [
          "CPU ms per message, bearerbox + smsbox",
          `${show(measures.cpu_kannel_ms_per_msg)} (${show(measures.cpu_bearerbox_ms_per_msg)} + ${show(measures.cpu_smsbox_ms_per_msg)})`,
        ],
        [
          "complete (submits = messages, one DLR per id)",
          `${completeness.complete ? "yes" : "NO"}: ${sink.submits} submits, ${receiver.delivered.size} ids reported, ${dlr.duplicate} duplicates`,
        ],
      ],
    ),
  );
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return completeness.complete;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      messages: { type: "string", default: "20000" },
      connections: { type: "string", default: "50" },
      "per-request": { type: "string", default: "1" },
      "sink-ids": { type: "string", default: "opaque" },
      timeout: { type: "string", default: "300" },
      "smsbox-max-pending": { type: "string" },
      warmup: { type: "string", default: "0" },
    },
    strict: true,
  });
  const whole = (name: string, raw: string, min: number, max: number) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be ${min}–${max}`);
    return n;
  };
  const messages = whole("messages", values.messages, 1, 1_000_000);
  const perRequest = whole("per-request", values["per-request"], 1, 1_000);
  const sinkIds = ID_FORMS.find((f) => f === values["sink-ids"]);
  if (!sinkIds) throw new Error(`--sink-ids must be one of ${ID_FORMS.join(", ")}`);
  const connections = whole(
    "connections",
    values.connections,
    1,
    Math.min(1_000, Math.ceil(messages / perRequest)),
  );
  const timeoutS = whole("timeout", values.timeout, 10, 3_600);
  const pending = values["smsbox-max-pending"];
  const smsboxMaxPending = pending === undefined ? null : whole("smsbox-max-pending", pending, 1, 100_000);
  const warmUpMessages = whole("warmup", values.warmup, 0, 1_000_000);

  const phase = { now: "starting" };
  // Set once the run is being stopped (it ended, timed out or was signalled).
  let stopping = false;
  let exitCode: number;
  const stopped = new Promise<number>((resolve) => {
    const watchdog = setTimeout(() => {
      say(`timed out after ${timeoutS} s, during ${phase.now}: stopping everything`);
      resolve(2);
    }, timeoutS * 1_000);
    for (const [signal, code] of [
      ["SIGINT", 130],
      ["SIGTERM", 143],
    ] as const)
      process.once(signal, () => {
        say(`${signal}: stopping everything`);
        resolve(code);
      });
    cleanup.add(async () => clearTimeout(watchdog));
  });
  try {
    const complete = run(
      { messages, connections, perRequest, sinkIds, smsboxMaxPending, warmUpMessages },
      phase,
    ).then(
      (ok) => (ok ? 0 : 1),
      (err: unknown) => {
        // Once stopping (timeout, signal), what fails next is only the stopping itself.
        if (!stopping) say(`kannel bench: ${err instanceof Error ? err.message : String(err)}`);
        return 1;
      },
    );
    exitCode = await Promise.race([complete, stopped]);
  } finally {
    stopping = true;
    await cleanup.run();
  }
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    say(`kannel bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await cleanup.run();
    process.exit(1);
  },
);
