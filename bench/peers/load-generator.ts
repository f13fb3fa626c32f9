/**
 * The whole-pipeline bench's load: a process of its own that sends through the API as a customer
 * would, with autocannon holding a fixed number of requests in flight, each to new recipients.
 * Forked by bench/pipeline/run-pipeline.ts (and, in sendsms mode, by bench/peers/kannel-bench.ts)
 * with its plan as JSON in argv[2]; reports progress and its result over the IPC channel, then exits.
 *
 * Timestamps are wall-clock milliseconds with sub-millisecond resolution (timeOrigin + now), so
 * the bench process can set them against the callbacks it receives.
 */
import autocannon from "autocannon";
import { z } from "zod";
import { startCallbackServer } from "./callback-server.ts";
import {
  type AcceptedMessage,
  digits,
  type LoadMessage,
  loadControlSchema,
  loadPlanSchema,
  recipient,
  sendsmsPath,
  wallMs,
} from "./load-protocol.ts";

const singleAnswer = z.object({ id: z.string(), to: z.string() });
const bulkAnswer = z.object({
  data: z.object({ items: z.array(z.object({ id: z.string(), to: z.string() })) }),
});

function send(message: LoadMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, () => resolve());
  });
}

/**
 * The receiver of the plan, if any: started, announced, and told its secret or to forget the
 * probe's callbacks by the bench; resolves the returned promise when the bench says start.
 */
async function serveCallbacks(kind: "webhook" | "dlr"): Promise<{ url: string; started: Promise<void> }> {
  const server = await startCallbackServer(kind, (m) => void send(m));
  const started = new Promise<void>((resolve) => {
    process.on("message", (raw: unknown) => {
      const control = loadControlSchema.parse(raw);
      if (control.type === "start") resolve();
      else if (control.type === "secret") server.setSecret(control.secret);
      else server.reset();
    });
  });
  // Up until the bench goes away: late callbacks (duplicates) still count.
  process.on("disconnect", () => void server.stop().finally(() => process.exit(0)));
  await send({ type: "receiver", url: server.url });
  return { url: server.url, started };
}

async function main(): Promise<void> {
  const plan = loadPlanSchema.parse(JSON.parse(process.argv[2] ?? "{}"));
  const single = plan.mode === "single";
  const receiver = plan.receiver ? await serveCallbacks(plan.receiver) : null;
  const sendsmsPlan = plan.mode === "sendsms" ? plan.sendsms : undefined;
  const dlrUrl = sendsmsPlan?.dlrUrl ?? receiver?.url;
  if (plan.mode === "sendsms" && (!sendsmsPlan || !dlrUrl))
    throw new Error("a sendsms plan needs its sendsms settings and a dlr-url (or its own receiver)");
  const sendsms = sendsmsPlan && dlrUrl ? { username: sendsmsPlan.username, dlrUrl } : undefined;
  let subscriber = plan.firstSubscriber;
  const accepted: AcceptedMessage[] = [];
  const failureSamples: string[] = [];
  let failed = 0;
  let responses = 0;
  let lastResponseAtMs = 0;

  const body = () => {
    if (single)
      return JSON.stringify({ to: recipient(subscriber++), from: plan.from, message: plan.message });
    const to = Array.from({ length: plan.perRequest }, () => recipient(subscriber++));
    return JSON.stringify({ to, from: plan.from, message: plan.message });
  };
  // Kannel answers "0: Accepted for delivery" and no id, so each request's recipients (their
  // digits are the messages' ids) are kept with its connection, which has one request in flight:
  // autocannon's context.
  const sendsmsInFlight = new WeakMap<object, string[]>();
  const sendsmsRequest = (
    settings: { username: string; dlrUrl: string },
    request: autocannon.Request,
    context: object,
  ): autocannon.Request => {
    // Each request to new recipients, as in the other modes.
    const to = Array.from({ length: plan.perRequest }, () => recipient(subscriber++));
    sendsmsInFlight.set(context, to);
    const path = sendsmsPath({
      username: settings.username,
      password: plan.key,
      from: plan.from,
      to,
      text: plan.message,
      dlrUrl: settings.dlrUrl,
    });
    return { ...request, path };
  };

  const onResponse = (status: number, text: string, context: object) => {
    const at = wallMs();
    lastResponseAtMs = at;
    responses++;
    if (status !== 202) {
      failed++;
      if (failureSamples.length < 5) failureSamples.push(`${status}: ${text.slice(0, 300)}`);
      return;
    }
    if (sendsms) {
      const sent = sendsmsInFlight.get(context);
      if (sent) for (const to of sent) accepted.push([digits(to), to, at]);
      else failed++;
      return;
    }
    try {
      if (single) {
        const m = singleAnswer.parse(JSON.parse(text));
        accepted.push([m.id, m.to, at]);
      } else {
        for (const m of bulkAnswer.parse(JSON.parse(text)).data.items) accepted.push([m.id, m.to, at]);
      }
    } catch (err) {
      failed++;
      if (failureSamples.length < 5) failureSamples.push(`unreadable 202: ${String(err).slice(0, 300)}`);
    }
  };

  await receiver?.started;
  const cpuBefore = process.cpuUsage();
  const progress = setInterval(() => void send({ type: "progress", responses }), 100);
  const startedAtMs = wallMs();
  // One autocannon per API process, the connections and requests shared out between them.
  const share = (total: number, i: number) =>
    Math.floor(total / plan.bases.length) + (i < total % plan.bases.length ? 1 : 0);
  const results = await Promise.all(
    plan.bases.map(
      (base, i) =>
        new Promise<autocannon.Result>((resolve, reject) => {
          autocannon(
            {
              url: `${base}${sendsms ? "/cgi-bin/sendsms" : single ? "/api/v1/sms" : "/api/v1/sms/bulk"}`,
              method: sendsms ? "GET" : "POST",
              connections: Math.max(1, share(plan.inFlight, i)),
              amount: share(plan.requests, i),
              timeout: 120,
              headers: sendsms
                ? {}
                : { authorization: `Bearer ${plan.key}`, "content-type": "application/json" },
              // A body of its own for every request: each recipient is new, so the sink can tell a
              // duplicate submit from a second message.
              requests: [
                {
                  setupRequest: (request, context) =>
                    sendsms ? sendsmsRequest(sendsms, request, context) : { ...request, body: body() },
                  onResponse: (status, text, context) => onResponse(status, text, context),
                },
              ],
            },
            (err: unknown, r) =>
              err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(r),
          );
        }),
    ),
  );
  // Several instances: each percentile is the worst instance's (no histogram to merge).
  const worst = (pick: (r: autocannon.Result) => number) => Math.max(...results.map(pick));
  const sum = (pick: (r: autocannon.Result) => number) => results.reduce((n, r) => n + pick(r), 0);
  const result = {
    requests: { total: sum((r) => r.requests.total) },
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    non2xx: sum((r) => r.non2xx),
    latency: {
      p50: worst((r) => r.latency.p50),
      p90: worst((r) => r.latency.p90),
      p99: worst((r) => r.latency.p99),
      max: worst((r) => r.latency.max),
      average:
        sum((r) => r.latency.average * r.requests.total) /
        Math.max(
          1,
          sum((r) => r.requests.total),
        ),
    },
  };
  // autocannon calls back on its next one-second tick, up to a second after the last answer: the
  // run ends with its last answer, or its rate would be rounded down to whole seconds.
  const finishedAtMs = lastResponseAtMs || wallMs();
  clearInterval(progress);
  const cpu = process.cpuUsage(cpuBefore);
  await send({
    type: "result",
    startedAtMs,
    finishedAtMs,
    requests: result.requests.total,
    failed: Math.max(failed, result.errors + result.timeouts + result.non2xx),
    failureSamples,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.average,
    },
    accepted,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  });
  // With a receiver the bench stops this process once every callback is in.
  if (!receiver) process.disconnect?.();
}

main().catch((err: unknown) => {
  process.stderr.write(
    `load generator: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
