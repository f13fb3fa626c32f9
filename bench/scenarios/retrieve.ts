import { recipients, SENDER } from "../dispatch-lib/harness.ts";
import { round } from "../lib/report.ts";
import { failures, latencyOf, load } from "./load.ts";
import type { Scenario } from "./types.ts";

const SEEDED = 1_000;

/** GET /api/v1/sms/{id} over a thousand messages of the account, round robin. */
export const retrieve: Scenario = {
  name: "retrieve",
  title: "retrieve (GET /api/v1/sms/{id})",
  kind: "http",
  async run(env, progress, { quick }) {
    if (!env) throw new Error("retrieve needs the API");
    const res = await fetch(`${env.base}/api/v1/sms/bulk`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        to: recipients(SEEDED, ["econet", "netone", "telecel"]),
        from: SENDER,
        message: "x",
      }),
      signal: AbortSignal.timeout(60_000),
    });
    if (res.status !== 202)
      throw new Error(`seeding answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    const ids = ((await res.json()) as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    let next = 0;
    const connections = 20;
    const warmup = quick ? 1 : 2;
    const duration = quick ? 3 : 10;
    const options = {
      url: env.base,
      connections,
      headers: { authorization: `Bearer ${env.key}` },
      requests: [
        {
          method: "GET" as const,
          setupRequest: (req: { path?: string }) => ({
            ...req,
            path: `/api/v1/sms/${ids[next++ % ids.length]}`,
          }),
        },
      ],
    };
    const share = warmup / (warmup + duration);
    await load({ ...options, duration: warmup }, progress, { from: 0, to: share });
    await env.pool.query("ANALYZE");
    const r = await load({ ...options, duration }, progress, { from: share, to: 1 });
    return {
      name: "retrieve",
      title: this.title,
      throughput: round(r.requests.average, 0),
      throughput_unit: "req/s",
      latency_ms: latencyOf(r),
      latency_of: "request (200)",
      samples: r.requests.total,
      seconds: round(r.duration, 2),
      errors: failures(r),
      settings: { connections, warmup_seconds: warmup, seconds: duration, distinct_ids: ids.length },
    };
  },
};
