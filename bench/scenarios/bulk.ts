import { recipients, SENDER } from "../dispatch-lib/harness.ts";
import { round } from "../lib/report.ts";
import { failures, latencyOf, load } from "./load.ts";
import type { Scenario } from "./types.ts";

/**
 * POST /api/v1/sms/bulk with n recipients (spread over the three operators) per request.
 * Throughput counts recipients accepted per second; latency is per request.
 */
export function bulk(
  n: number,
  plan: { connections: number; seconds?: number; requests?: number },
): Scenario {
  const name = `bulk-${n}`;
  return {
    name,
    title: `bulk send, ${n.toLocaleString("en")} recipients (POST /api/v1/sms/bulk)`,
    kind: "http",
    async run(env, progress, { quick }) {
      if (!env) throw new Error(`${name} needs the API`);
      const options = {
        url: `${env.base}/api/v1/sms/bulk`,
        method: "POST" as const,
        connections: plan.connections,
        headers: { authorization: `Bearer ${env.key}`, "content-type": "application/json" },
        body: JSON.stringify({
          to: recipients(n, ["econet", "netone", "telecel"]),
          from: SENDER,
          message: "Shiri bench: one body, many recipients.",
        }),
      };
      // Warm-up: enough requests to have every connection's first request behind us.
      await load({ ...options, amount: plan.connections }, progress, { from: 0, to: 0.15 });
      await env.pool.query("ANALYZE");
      const measured: { amount: number } | { duration: number } = plan.requests
        ? { amount: quick ? 1 : plan.requests }
        : { duration: quick ? 3 : (plan.seconds ?? 8) };
      const r = await load({ ...options, ...measured }, progress, { from: 0.15, to: 1 });
      const requests = r.requests.total;
      const seconds = r.wallSeconds;
      return {
        name,
        title: this.title,
        throughput: round(((requests - r.non2xx) * n) / seconds, 0),
        throughput_unit: "msg/s",
        latency_ms: latencyOf(r),
        latency_of: `request of ${n} recipients (202)`,
        samples: requests,
        seconds: round(seconds, 2),
        errors: failures(r),
        settings: {
          recipients: n,
          connections: plan.connections,
          ...("amount" in measured ? { requests: measured.amount } : { seconds: measured.duration }),
        },
      };
    },
  };
}
