import { SENDER } from "../dispatch-lib/harness.ts";
import { round } from "../lib/report.ts";
import { failures, latencyOf, load } from "./load.ts";
import type { Scenario } from "./types.ts";

/** POST /api/v1/sms: one recipient per request, many connections at once. */
export const single: Scenario = {
  name: "single",
  title: "single send (POST /api/v1/sms)",
  kind: "http",
  async run(env, progress, { quick }) {
    if (!env) throw new Error("single needs the API");
    const connections = 20;
    const warmup = quick ? 1 : 2;
    const duration = quick ? 3 : 10;
    const options = {
      url: `${env.base}/api/v1/sms`,
      method: "POST" as const,
      connections,
      headers: { authorization: `Bearer ${env.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        to: "+263771234567",
        from: SENDER,
        message: "Your code is 123456. Shiri bench.",
      }),
    };
    const share = warmup / (warmup + duration);
    await load({ ...options, duration: warmup }, progress, { from: 0, to: share });
    await env.pool.query("ANALYZE");
    const r = await load({ ...options, duration }, progress, { from: share, to: 1 });
    return {
      name: "single",
      title: this.title,
      throughput: round(r.requests.average, 0),
      throughput_unit: "msg/s",
      latency_ms: latencyOf(r),
      latency_of: "request (202)",
      samples: r.requests.total,
      seconds: round(r.duration, 2),
      errors: failures(r),
      settings: { connections, warmup_seconds: warmup, seconds: duration },
    };
  },
};
