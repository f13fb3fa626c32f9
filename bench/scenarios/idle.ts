import os from "node:os";
import { cpuSeconds } from "../dispatch-lib/cpu.ts";
import { SENDER } from "../dispatch-lib/harness.ts";
import { latencySummary } from "../dispatch-lib/stats.ts";
import { Cleanup } from "../lib/cleanup.ts";
import { knob } from "../lib/knob.ts";
import { round } from "../lib/report.ts";
import { databaseClientPorts } from "../pipeline/process-cpu.ts";
import { startEnvWithWorker } from "./env.ts";
import type { Scenario } from "./types.ts";

/** How long the processes settle after start-up before idleness is measured. */
const SETTLE_MS = 10_000;
/** Messages sent one at a time, each after a quiet spell, and the spell. */
const QUIET_MS = 3_000;
const TIMEOUT_MS = 30_000;

/**
 * What an idle worker costs, and what idleness costs the next message (issue 27, "idle costs
 * nothing"): an API and a worker in processes of their own, bound to the simulators, no traffic.
 * Over the idle window it reads the worker's CPU from /proc and counts the Postgres backends its
 * TCP connections hold. Then single messages, each sent after a quiet spell, and as many sent
 * back to back (the worker awake): latency is per message, from its creation to the carrier's
 * acceptance recorded (accepted_at), and the measure that matters is how much later the first
 * message after a quiet spell leaves than one on the busy path.
 */
export const idle: Scenario = {
  name: "idle",
  title: "idle worker: CPU and Postgres backends with no traffic; first message after a quiet spell",
  kind: "e2e",
  async run(_env, progress, { quick }) {
    // A minute by default: the worker's duties run every 5 to 60 s, and a 20 s window caught a
    // varying number of them (6 to 15 ms/s for the same code). BENCH_IDLE_SECONDS sets another.
    const idleMs = knob("BENCH_IDLE_SECONDS", quick ? 10 : 60, 5, 600) * 1000;
    const messages = quick ? 5 : 20;
    const cleanup = new Cleanup();
    try {
      const env = await startEnvWithWorker(cleanup);
      const { worker, pool } = env;
      const dbPort = Number(new URL(env.db.url).port || 5432);
      progress.update(0, "settling");
      await sleep(SETTLE_MS);

      const load = round(os.loadavg()[0] ?? 0, 2);
      const cpuBefore = cpuSeconds(worker.pid);
      const started = performance.now();
      const backendCounts: number[] = [];
      while (performance.now() - started < idleMs) {
        const ports = databaseClientPorts(worker.pid, dbPort);
        const { rows } = await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE client_port = ANY($1)",
          [ports],
        );
        backendCounts.push(rows[0]?.n ?? 0);
        progress.update((0.5 * (performance.now() - started)) / idleMs, "idle");
        await sleep(250);
      }
      const cpuAfter = cpuSeconds(worker.pid);
      const seconds = (performance.now() - started) / 1000;
      const cpuMsPerSecond =
        cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1000) / seconds;

      const send = async (): Promise<string> => {
        const res = await fetch(`${env.base}/api/v1/sms`, {
          method: "POST",
          headers: { authorization: `Bearer ${env.key}`, "content-type": "application/json" },
          body: JSON.stringify({ to: "+263771234567", from: SENDER, message: "Your code is 123456." }),
        });
        // The contract's single send answers with the message object, bare.
        const body = (await res.json()) as Record<string, unknown>;
        if (res.status !== 202 || typeof body.id !== "string")
          throw new Error(`send answered ${res.status}: ${JSON.stringify(body)}`);
        return body.id;
      };
      const leave = async (id: string): Promise<number> => {
        const deadline = Date.now() + TIMEOUT_MS;
        for (;;) {
          const { rows } = await pool.query<{ ms: number | null }>(
            "SELECT (extract(epoch FROM accepted_at - created_at) * 1000)::float8 AS ms FROM messages WHERE id = $1",
            [id],
          );
          const ms = rows[0]?.ms;
          if (ms !== null && ms !== undefined) return ms;
          if (Date.now() > deadline) throw new Error(`message ${id} not accepted by the carrier in time`);
          await sleep(5);
        }
      };

      const afterQuiet: number[] = [];
      for (let i = 0; i < messages; i++) {
        await sleep(QUIET_MS);
        afterQuiet.push(await leave(await send()));
        progress.update(0.5 + (0.4 * (i + 1)) / messages, `${i + 1} of ${messages} after a quiet spell`);
      }
      const busy: number[] = [];
      for (let i = 0; i < messages; i++) busy.push(await leave(await send()));
      afterQuiet.sort((a, b) => a - b);
      busy.sort((a, b) => a - b);
      const quietLatency = latencySummary(afterQuiet);
      const busyLatency = latencySummary(busy);
      const sortedCounts = [...backendCounts].sort((a, b) => a - b);
      const heldBackends = sortedCounts[Math.floor(sortedCounts.length / 2)] ?? 0;
      const mostBackends = sortedCounts[sortedCounts.length - 1] ?? 0;

      return {
        name: "idle",
        title: this.title,
        throughput: round(afterQuiet.length / ((messages * QUIET_MS) / 1000), 2),
        throughput_unit: "msg/s",
        latency_ms: quietLatency,
        latency_of: "message sent after a quiet spell, created → accepted by the carrier (accepted_at)",
        samples: afterQuiet.length,
        seconds: round(seconds, 1),
        errors: 0,
        settings: {
          idle_seconds: idleMs / 1000,
          quiet_ms: QUIET_MS,
          messages,
          load_average_1m: load,
        },
        measures: {
          idle_cpu_ms_per_s: {
            label: "worker CPU while idle",
            value: cpuMsPerSecond === null ? null : round(cpuMsPerSecond, 2),
            unit: "ms/s",
          },
          idle_backends: {
            label: "worker's Postgres backends held while idle (median of samples)",
            value: heldBackends,
            unit: "",
          },
          idle_backends_most: {
            label:
              "worker's Postgres backends while idle, most seen (duties that overlapped, for a pool idle timeout)",
            value: mostBackends,
            unit: "",
          },
          first_message_p50_ms: { label: "after a quiet spell, p50", value: quietLatency.p50, unit: "ms" },
          first_message_max_ms: { label: "after a quiet spell, max", value: quietLatency.max, unit: "ms" },
          busy_message_p50_ms: { label: "back to back, p50", value: busyLatency.p50, unit: "ms" },
          idle_penalty_ms: {
            label: "after a quiet spell minus back to back, p50",
            value: quietLatency.p50 - busyLatency.p50,
            unit: "ms",
          },
        },
      };
    } finally {
      await cleanup.run();
    }
  },
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
