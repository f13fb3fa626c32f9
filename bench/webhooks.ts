import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { createAccount } from "../src/accounts/accounts.ts";
import { addSenderId } from "../src/accounts/sender-ids.ts";
import { migrate } from "../src/db/migrate.ts";
import { createPool, withTransaction } from "../src/db/pool.ts";
import { knob } from "./lib/knob.ts";
import { provisionBenchDatabase } from "./lib/postgres.ts";
import { round } from "./lib/report.ts";
import {
  freePort,
  measureCompiledUnlessTold,
  type ShiriProcess,
  startShiriProcess,
} from "./lib/shiri-process.ts";

const RESULTS_FILE = fileURLToPath(new URL("./results/webhooks.json", import.meta.url));
const RECIPIENTS = knob("BENCH_RECIPIENTS", 10_000, 1, 10_000);
const PHASE_TIMEOUT_MS = knob("BENCH_PHASE_TIMEOUT_SECONDS", 600, 10, 3_600) * 1000;
const TRICKLE = knob("BENCH_TRICKLE", 300, 1, 10_000);
const PHASES = (process.env.BENCH_PHASES ?? "callbacks,pipeline,trickle").split(",").map((p) => p.trim());
for (const p of PHASES)
  if (!["callbacks", "pipeline", "trickle"].includes(p)) throw new Error(`unknown phase ${p}`);
measureCompiledUnlessTold();

const row = (cells: ReadonlyArray<string | number>) => `| ${cells.join(" | ")} |`;

interface Arrival {
  id: string;
  messageId: string;
  type: string;
  createdAt: number;
  at: number;
}

/** Answers 200 at once and notes when each event arrived; duplicates are counted, not stored twice. */
async function startReceiver(): Promise<{
  url: string;
  arrivals: Map<string, Arrival>;
  duplicates: () => number;
  server: Server;
}> {
  const arrivals = new Map<string, Arrival>();
  let duplicates = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        id: string;
        type: string;
        created_at: string;
        data: { id: string };
      };
      if (arrivals.has(event.id)) duplicates++;
      else
        arrivals.set(event.id, {
          id: event.id,
          messageId: event.data.id,
          type: event.type,
          createdAt: Date.parse(event.created_at),
          at,
        });
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, arrivals, duplicates: () => duplicates, server };
}

async function api(
  base: string,
  headers: Record<string, string>,
  method: string,
  path: string,
  body: unknown,
) {
  const res = await fetch(base + path, { method, headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as unknown;
}

async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function carrierEnv(reachable: boolean): Promise<Record<string, string>> {
  const env: Record<string, string> = { START_SIMULATORS: reachable ? "true" : "false" };
  for (const op of ["ECONET", "NETONE", "TELECEL"]) {
    env[`SMPP_${op}_HOST`] = "127.0.0.1";
    env[`SMPP_${op}_PORT`] = String(await freePort()); // unreachable unless the simulators take it
  }
  return env;
}

async function runPhase(phase: string) {
  const db = await provisionBenchDatabase();
  const receiver = await startReceiver();
  let service: ShiriProcess | null = null;
  try {
    const pool = createPool(db.url, 2);
    await migrate(pool);
    const { account, key } = await withTransaction(pool, (tx) =>
      createAccount(tx, { name: "bench", currency: "USD", openingBalance: 1_000_000_000_000 }),
    );
    await withTransaction(pool, (tx) => addSenderId(tx, account.id, "BENCH", "verified"));
    await pool.end();

    service = await startShiriProcess({
      role: "all",
      databaseUrl: db.url,
      env: await carrierEnv(phase === "pipeline"),
      readyTimeoutMs: 60_000,
    });
    const headers = { authorization: `Bearer ${key.token}`, "content-type": "application/json" };
    // The status change each callback announces, as the sender sees it: the 202 of its send
    // (the commit) for `message.enqueued`, the event's own transaction time for the others.
    const acceptedAt = new Map<string, number>();
    let sent = Date.now();
    let accepted = sent;
    if (phase === "trickle") {
      await api(service.base, headers, "PUT", "/api/v1/webhook", { url: receiver.url });
      sent = Date.now();
      for (let i = 0; i < TRICKLE; i++) {
        const body = await api(service.base, headers, "POST", "/api/v1/sms", {
          to: `+26377${String(1_000_000 + i).padStart(7, "0")}`,
          from: "BENCH",
          message: "trickle",
        });
        acceptedAt.set((body as { id: string }).id, Date.now());
        await new Promise((r) => setTimeout(r, 20));
      }
      accepted = Date.now();
    } else {
      // Recipients spread over the three operators, all routable.
      const prefixes = ["77", "71", "73", "78"];
      const to = Array.from(
        { length: RECIPIENTS },
        (_, i) => `+263${prefixes[i % 4]}${String(1_000_000 + i).padStart(7, "0")}`,
      );
      const body = await api(service.base, headers, "POST", "/api/v1/sms/bulk", {
        to,
        from: "BENCH",
        message: "bench",
        webhook_url: receiver.url,
      });
      accepted = Date.now();
      for (const item of (body as { data: { items: { id: string }[] } }).data.items)
        acceptedAt.set(item.id, accepted);
    }
    const expected = phase === "pipeline" ? RECIPIENTS * 3 : phase === "trickle" ? TRICKLE : RECIPIENTS;
    await until(() => receiver.arrivals.size >= expected, PHASE_TIMEOUT_MS, `${expected} callbacks`);

    const arrivals = [...receiver.arrivals.values()];
    const last = Math.max(...arrivals.map((a) => a.at));
    const first = Math.min(...arrivals.map((a) => a.at));
    const latency = (a: Arrival) =>
      a.at - (a.type === "message.enqueued" ? (acceptedAt.get(a.messageId) ?? Number.NaN) : a.createdAt);
    const byType = new Map<string, number[]>();
    for (const a of arrivals) byType.set(a.type, [...(byType.get(a.type) ?? []), latency(a)]);
    const all = arrivals.map(latency);
    return {
      phase,
      callbacks: arrivals.length,
      duplicates: receiver.duplicates(),
      send_ms: accepted - sent,
      seconds_from_202_to_last: round((last - accepted) / 1000, 2),
      // A trickle's rate is the rate it was sent at: not a figure of the stage.
      per_second: phase === "trickle" ? null : round(arrivals.length / ((last - accepted) / 1000), 0),
      per_second_first_to_last: round(arrivals.length / ((last - first) / 1000), 0),
      latency_ms: {
        p50: percentile(all, 50),
        p99: percentile(all, 99),
        max: Math.max(...all),
        by_type: Object.fromEntries(
          [...byType].map(([t, v]) => [t, { p50: percentile(v, 50), p99: percentile(v, 99) }]),
        ),
      },
    };
  } finally {
    if (service) await service.stop();
    receiver.server.closeAllConnections();
    await new Promise((r) => receiver.server.close(r));
    await db.drop();
  }
}

const results = [];
for (const phase of PHASES) {
  process.stderr.write(`phase ${phase}: ${RECIPIENTS} recipients...\n`);
  results.push(await runPhase(phase));
}
const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}`;
console.log(`\nWebhooks, ${RECIPIENTS}-recipient bulk send, loopback receiver (${machine})\n`);
const header = [
  "phase",
  "callbacks",
  "dupes",
  "202 → last (s)",
  "callbacks/s",
  "latency p50 (ms)",
  "latency p99 (ms)",
];
console.log([row(header), row(header.map(() => "---"))].join("\n"));
for (const r of results) {
  const { p50, p99 } = r.latency_ms;
  console.log(
    row([r.phase, r.callbacks, r.duplicates, r.seconds_from_202_to_last, r.per_second ?? "—", p50, p99]),
  );
}
for (const r of results)
  console.log(`\n${r.phase} latency by type (ms): ${JSON.stringify(r.latency_ms.by_type)}`);
await mkdir(fileURLToPath(new URL("./results/", import.meta.url)), { recursive: true });
await writeFile(
  RESULTS_FILE,
  `${JSON.stringify({ machine, at: new Date().toISOString(), results }, null, 2)}\n`,
);
