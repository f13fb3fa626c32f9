import { OPERATORS } from "../../carriers/index.ts";
import { bulkSend, recipients } from "../dispatch-lib/harness.ts";
import { latencySummary } from "../dispatch-lib/stats.ts";
import { Cleanup } from "../lib/cleanup.ts";
import { round } from "../lib/report.ts";
import { startEnvWithWorker } from "./env.ts";
import type { Scenario } from "./types.ts";

/** Each scheduled bulk send's recipients, and how far apart their send_at fall. */
const PER_SEND = 100;
const SPACING_MS = 250;
/** How far ahead the first send_at is: every send is accepted well before its time. */
const LEAD_MS = 5_000;
const TIMEOUT_MS = 120_000;

/**
 * Scheduled sends (send_at): bulk sends accepted ahead of time, due one every SPACING_MS over a
 * few seconds while the worker dispatches the ones already due. Latency is per message, from its
 * send_at to the carrier's acceptance recorded (accepted_at): how promptly a scheduled message
 * leaves (the API promises within a second). A message accepted before its send_at counts as an
 * error. Its own database, API, worker and simulators.
 */
export const scheduled: Scenario = {
  name: "scheduled",
  title: `scheduled sends: send_at → accepted by the carrier (${PER_SEND} per send, one due every ${SPACING_MS} ms)`,
  kind: "e2e",
  async run(_env, progress, { quick }) {
    const sends = quick ? 8 : 24;
    const total = sends * PER_SEND;
    const cleanup = new Cleanup();
    try {
      const env = await startEnvWithWorker(cleanup);
      const { worker } = env;

      const first = Date.now() + LEAD_MS;
      for (let i = 0; i < sends; i++)
        await bulkSend(env.base, env.key, recipients(PER_SEND, OPERATORS), "Shiri bench: scheduled.", {
          send_at: new Date(first + i * SPACING_MS).toISOString(),
        });
      if (Date.now() > first)
        throw new Error("the scheduled sends were not all accepted before the first was due");
      await env.pool.query("ANALYZE");

      const started = performance.now();
      for (;;) {
        if (worker.exited()) throw new Error(`worker exited:\n${worker.output()}`);
        const { rows } = await env.pool.query<{ final: number }>(
          "SELECT count(*) FILTER (WHERE status IN ('success', 'failed'))::int AS final FROM messages",
        );
        const final = rows[0]?.final ?? 0;
        progress.update(final / total, `${final} of ${total} sent`);
        if (final >= total) break;
        if (performance.now() - started > TIMEOUT_MS)
          throw new Error(`scheduled: ${final} of ${total} final after ${TIMEOUT_MS / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }

      const { rows } = await env.pool.query<{ ms: number }>(
        `SELECT (extract(epoch FROM accepted_at - send_at) * 1000)::float8 AS ms
           FROM messages WHERE status = 'success' ORDER BY 1`,
      );
      const lateness = rows.map((r) => r.ms);
      const early = lateness.filter((ms) => ms < 0).length;
      return {
        name: "scheduled",
        title: this.title,
        throughput: round(lateness.length / ((sends * SPACING_MS) / 1000), 0),
        throughput_unit: "msg/s",
        latency_ms: latencySummary(lateness),
        latency_of: "message, send_at → accepted_at (the carrier's acceptance recorded)",
        samples: lateness.length,
        seconds: round((sends * SPACING_MS) / 1000, 2),
        // Sent before its time, or not sent at all.
        errors: early + (total - lateness.length),
        settings: { messages: total, sends, recipients_per_send: PER_SEND, send_at_every_ms: SPACING_MS },
      };
    } finally {
      await cleanup.run();
    }
  },
};
