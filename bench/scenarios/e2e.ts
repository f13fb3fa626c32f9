import { DEFAULT_BEHAVIOUR } from "../../carriers/simulator/index.ts";
import { bulkSend, recipients } from "../dispatch-lib/harness.ts";
import { latencySummary } from "../dispatch-lib/stats.ts";
import { Cleanup } from "../lib/cleanup.ts";
import { round } from "../lib/report.ts";
import { startEnvWithWorker } from "./env.ts";
import type { Scenario } from "./types.ts";

const OPERATORS = ["econet", "netone", "telecel"] as const;
/** Offered load: messages per second, sent as a bulk request every INTERVAL_MS. */
const RATE = 1_000;
const INTERVAL_MS = 250;
const TIMEOUT_MS = 120_000;

/**
 * End to end at a steady offered load (RATE msg/s for 10 s, as bulk sends of RATE/4 recipients
 * every 250 ms, open loop) through the API while one worker process dispatches to the carrier
 * simulators and applies their receipts. Latency is per message, from its acceptance
 * (received_at) to delivered_at; throughput is messages delivered per second from the first
 * acceptance to the last delivery. Its own database, API, worker and simulators, so nothing
 * queued by the other scenarios is in the way.
 */
export const e2e: Scenario = {
  name: "e2e",
  title: `end to end at ${RATE.toLocaleString("en")} msg/s offered: accepted → delivered_at (1 worker)`,
  kind: "e2e",
  async run(_env, progress, { quick }) {
    const seconds = quick ? 3 : 10;
    const chunk = Math.round((RATE * INTERVAL_MS) / 1000);
    const requests = Math.round((seconds * 1000) / INTERVAL_MS);
    const total = requests * chunk;
    const cleanup = new Cleanup();
    try {
      const env = await startEnvWithWorker(cleanup);
      const { worker } = env;
      await env.pool.query("ANALYZE");

      const count = async () =>
        (
          await env.pool.query<{ delivered: number; failed: number }>(
            `SELECT count(*) FILTER (WHERE delivered_at IS NOT NULL)::int AS delivered,
                    count(*) FILTER (WHERE status = 'failed')::int AS failed FROM messages`,
          )
        ).rows[0] ?? { delivered: 0, failed: 0 };

      // Open loop: a bulk send every INTERVAL_MS whatever the previous one is doing, so the
      // offered rate stays fixed and latency is the pipeline's, not a queue the bench built.
      let sent = 0;
      let sendError: unknown = null;
      const inFlight: Promise<void>[] = [];
      const sending = (async () => {
        const t0 = performance.now();
        for (let i = 0; i < requests; i++) {
          const wait = t0 + i * INTERVAL_MS - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          if (sendError) return;
          inFlight.push(
            bulkSend(env.base, env.key, recipients(chunk, OPERATORS), "Shiri bench: end to end.").then(
              () => {
                sent += chunk;
              },
              (err: unknown) => {
                sendError = err;
              },
            ),
          );
        }
        await Promise.all(inFlight);
      })();
      const started = performance.now();
      for (;;) {
        if (sendError) throw sendError;
        if (worker.exited()) throw new Error(`worker exited:\n${worker.output()}`);
        const c = await count();
        progress.update(
          (sent / total) * 0.3 + (c.delivered / total) * 0.7,
          `sent ${sent}, delivered ${c.delivered}`,
        );
        if (c.delivered + c.failed >= total) break;
        if (performance.now() - started > TIMEOUT_MS) {
          throw new Error(`end to end: ${c.delivered} of ${total} delivered after ${TIMEOUT_MS / 1000} s`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      await sending;

      const { rows } = await env.pool.query<{ ms: number }>(
        `SELECT (extract(epoch FROM delivered_at - received_at) * 1000)::float8 AS ms
           FROM messages WHERE delivered_at IS NOT NULL ORDER BY 1`,
      );
      const latencies = rows.map((r) => r.ms);
      const span = (
        await env.pool.query<{ seconds: number }>(
          `SELECT extract(epoch FROM max(delivered_at) - min(received_at))::float8 AS seconds FROM messages`,
        )
      ).rows[0]?.seconds;
      const spanSeconds = span ?? Number.NaN;
      const failed = (await count()).failed;
      return {
        name: "e2e",
        title: this.title,
        throughput: round(latencies.length / spanSeconds, 0),
        throughput_unit: "msg/s",
        latency_ms: latencySummary(latencies),
        latency_of: "message, received_at → delivered_at",
        samples: latencies.length,
        seconds: round(spanSeconds, 2),
        errors: failed + (total - latencies.length - failed),
        settings: {
          offered_msg_per_s: RATE,
          messages: total,
          bulk_requests: requests,
          recipients_per_request: chunk,
          request_every_ms: INTERVAL_MS,
          receipt_delay_ms: DEFAULT_BEHAVIOUR.receiptDelayMs,
          workers: 1,
        },
      };
    } finally {
      await cleanup.run();
    }
  },
};
