/**
 * The CPU one callback request costs the sender: postCallback posting a 225-byte event, 32 in
 * flight, to a keep-alive node:http receiver in a child process, read with process.cpuUsage();
 * the figures are in docs/decisions/0028-callback-http-client.md.
 *   node --import tsx bench/callback-client.ts [requests per round, default 20000] [module]
 * `module` is a postCallback module to measure instead of src/webhooks/post-callback.ts (an older
 * copy beside it, to compare: one exporting callbackAgents() is given agents). Prints µs of CPU a
 * request for each of five rounds after a warm-up, and the best three.
 */
import { fork } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { callbackConnections } from "../src/webhooks/callback-connections.ts";
import type { AttemptOutcome, Callback } from "../src/webhooks/post-callback.ts";

const REQUESTS = Number(process.argv[2] ?? 20_000);
const MODULE = path.resolve(process.argv[3] ?? "src/webhooks/post-callback.ts");
const IN_FLIGHT = 32;
const ROUNDS = 5;

if (process.argv[2] === "--receiver") {
  const http = await import("node:http");
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
    });
  });
  server.listen(0, "127.0.0.1", () => process.send?.(JSON.stringify(server.address())));
} else {
  await measure();
}

type Post = (cb: Callback, opts: Record<string, unknown>) => Promise<AttemptOutcome>;

async function measure(): Promise<void> {
  const mod = (await import(pathToFileURL(MODULE).href)) as {
    postCallback: Post;
    callbackAgents?: () => unknown;
  };
  const receiver = fork(new URL(import.meta.url).pathname, ["--receiver"], {
    execArgv: ["--import", "tsx"],
  });
  const { port } = JSON.parse(
    await new Promise<string>((resolve) => receiver.once("message", (m) => resolve(String(m)))),
  ) as { port: number };
  const opts = {
    timeoutMs: 5_000,
    allowPrivate: true,
    ...(mod.callbackAgents ? { agents: mod.callbackAgents() } : { connections: callbackConnections() }),
  };
  const body = JSON.stringify({
    id: "37c07e67-8c41-4e8b-9f63-0f7087f37dc1",
    type: "message.delivered",
    created_at: new Date().toISOString(),
    data: { id: "0190f1e2-7c4b-7d7a-9b1e-3f2a5c6d7e8f", status: "delivered", to: "+263771234567" },
  }).padEnd(225, " ");
  const cb: Callback = {
    url: `http://127.0.0.1:${port}/hooks`,
    events: [{ id: "37c07e67-8c41-4e8b-9f63-0f7087f37dc1", type: "message.delivered" }],
    batched: false,
    body,
    secrets: ["whsec_bench"],
  };

  async function round(n: number): Promise<number> {
    const before = process.cpuUsage();
    let sent = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (sent++ < n) if ((await mod.postCallback(cb, opts)).kind !== "delivered") failed++;
      }),
    );
    if (failed > 0) throw new Error(`${failed} callbacks not delivered`);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / n;
  }

  await round(Math.min(REQUESTS, 5_000));
  const rounds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(REQUESTS));
  const best = [...rounds].sort((a, b) => a - b).slice(0, 3);
  console.log(
    `${path.relative(process.cwd(), MODULE)}: rounds ${rounds.map((r) => r.toFixed(1)).join(" ")} µs; ` +
      `best three ${best.map((r) => r.toFixed(1)).join("/")} µs CPU a request`,
  );
  receiver.kill();
  process.exit(0);
}
