import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Session } from "smpp";
import { sendMobileOriginated } from "../../carriers/simulator/mobile-originated.ts";
import { smppEnv, startBenchSimulators, waitForBinds } from "../dispatch-lib/harness.ts";
import { latencySummary } from "../dispatch-lib/stats.ts";
import { Cleanup } from "../lib/cleanup.ts";
import { round } from "../lib/report.ts";
import { startShiriProcess } from "../lib/shiri-process.ts";
import { startEnv } from "./env.ts";
import type { Scenario } from "./types.ts";

/** The short code the handsets write to, the account's. */
const SHORT_CODE = "33333";
/** deliver_sm in flight at once from the SMSC (its window). */
const IN_FLIGHT = 200;
const TIMEOUT_MS = 120_000;
const OPERATORS = ["econet", "netone", "telecel"] as const;

/** A receiver of message.received callbacks: when each handset's message was called back. */
async function startReceiver() {
  const arrived = new Map<string, number>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      res.writeHead(200, { "content-length": "0" }).end();
      requests++;
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      for (const event of Array.isArray(body) ? body : [body]) {
        const from = (event as { data?: { from?: unknown } }).data?.from;
        if (typeof from === "string" && !arrived.has(from)) arrived.set(from, at);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/inbound`,
    arrived,
    requests: () => requests,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Two-way messaging at full speed (issue 26): the carrier simulator sends handsets' messages to
 * one worker process (IN_FLIGHT deliver_sm at a time, each from its own number, to the account's
 * short code), which stores each before answering it, routes it, and calls it back
 * (message.received, batches of 100) to a receiver here. Throughput is messages from the first
 * deliver_sm to the last callback per second; latency is per message, deliver_sm sent → its
 * callback; settings.stored_msg_per_s is up to the last deliver_sm_resp, the storing alone.
 */
export const inbound: Scenario = {
  name: "inbound",
  title: `mobile-originated messages stored and called back (${IN_FLIGHT} deliver_sm in flight, 1 worker)`,
  kind: "e2e",
  async run(_env, progress, { quick }) {
    const total = quick ? 3_000 : 20_000;
    const cleanup = new Cleanup();
    try {
      const env = await startEnv(cleanup, { WEBHOOK_ALLOW_PRIVATE: "true" });
      await env.pool.query("INSERT INTO inbound_numbers (number, account_id) VALUES ($1, $2)", [
        SHORT_CODE,
        env.accountId,
      ]);
      const receiver = await startReceiver();
      cleanup.add(receiver.stop);
      const put = await fetch(`${env.base}/api/v1/webhook`, {
        method: "PUT",
        headers: { authorization: `Bearer ${env.key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: receiver.url, events: ["message.received"], batch_size: 100 }),
      });
      if (put.status !== 200)
        throw new Error(`PUT /api/v1/webhook answered ${put.status}: ${await put.text()}`);
      const sims = await startBenchSimulators({});
      cleanup.add(() => sims.stop());
      const worker = await startShiriProcess({
        role: "worker",
        databaseUrl: env.db.url,
        env: { WEBHOOK_ALLOW_PRIVATE: "true", ...smppEnv(sims.ports) },
      });
      cleanup.add(worker.stop);
      await waitForBinds(sims, OPERATORS, 30_000);
      const sessions: Session[] = sims.get("econet").boundSessionList();

      const numberOf = (i: number) => `26377${String(3_000_000 + i).padStart(7, "0")}`;
      const sentAt = new Map<string, number>();
      let answered = 0;
      let refused = 0;
      let next = 0;
      const started = performance.now();
      const sender = async () => {
        for (let i = next++; i < total; i = next++) {
          const from = numberOf(i);
          sentAt.set(from, performance.now());
          const result = await sendMobileOriginated(sessions, {
            from,
            to: SHORT_CODE,
            text: `Reply ${i}: yes please`,
          });
          if (result.sent.some((s) => s.command_status !== 0)) refused++;
          answered++;
        }
      };
      const sending = Promise.all(Array.from({ length: IN_FLIGHT }, sender));
      let lastAnswer = 0;
      void sending.then(() => {
        lastAnswer = performance.now();
      });
      for (;;) {
        if (worker.exited()) throw new Error(`worker exited:\n${worker.output()}`);
        const called = receiver.arrived.size;
        progress.update(
          (answered / total) * 0.5 + (called / total) * 0.5,
          `${answered} stored, ${called} called back`,
        );
        if (called >= total) break;
        if (performance.now() - started > TIMEOUT_MS)
          throw new Error(`inbound: ${called} of ${total} called back after ${TIMEOUT_MS / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await sending;
      const last = Math.max(...receiver.arrived.values());
      const latencies = [...receiver.arrived.entries()]
        .map(([from, at]) => at - (sentAt.get(from) ?? at))
        .sort((a, b) => a - b);
      const stored = (
        await env.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM inbound_messages WHERE account_id = $1",
          [env.accountId],
        )
      ).rows[0]?.n;
      const spanSeconds = (last - started) / 1_000;
      return {
        name: "inbound",
        title: this.title,
        throughput: round(total / spanSeconds, 0),
        throughput_unit: "msg/s",
        latency_ms: latencySummary(latencies),
        latency_of: "handset message, deliver_sm sent → its message.received callback",
        samples: latencies.length,
        seconds: round(spanSeconds, 2),
        errors: refused + (total - (stored ?? 0)),
        settings: {
          messages: total,
          deliver_sm_in_flight: IN_FLIGHT,
          webhook_batch_size: 100,
          workers: 1,
          callback_requests: receiver.requests(),
          // The storing alone: first deliver_sm → last deliver_sm_resp.
          stored_msg_per_s: round(total / ((lastAnswer - started) / 1_000), 0),
        },
      };
    } finally {
      await cleanup.run();
    }
  },
};
