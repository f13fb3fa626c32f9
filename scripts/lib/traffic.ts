/**
 * Real traffic for the dashboard check, through the public API into the in-process carrier
 * simulators: single and bulk sends to every operator, unroutable numbers, multi-part and UCS-2
 * bodies, bulk sends with a webhook_url pointing at a loopback receiver, and a few bad requests.
 */
import { createServer, type Server } from "node:http";

export interface WebhookReceiver {
  url: string;
  /** Callback POSTs received, and how many of them were answered with an error on purpose. */
  received(): { total: number; refused: number };
  close(): Promise<void>;
}

/** Answers 503 to the first `refuseFirst` callbacks (so some are retried), 204 to the rest. */
export function startWebhookReceiver(refuseFirst: number): Promise<WebhookReceiver> {
  let total = 0;
  let refused = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      total++;
      if (refused < refuseFirst) {
        refused++;
        res.writeHead(503).end();
      } else res.writeHead(204).end();
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}/shiri-callbacks`,
        received: () => ({ total, refused }),
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

const PREFIXES = ["77", "78", "71", "73"]; // econet, econet, netone, telecel (carriers/*.ts)
const UNROUTABLE = ["0771234567", "+27821234567", "+2631234"]; // local format, foreign, too short

function msisdn(i: number): string {
  const prefix = PREFIXES[i % PREFIXES.length] ?? "77";
  return `+263${prefix}${String(1_000_000 + ((i * 7919) % 9_000_000)).padStart(7, "0")}`;
}

export interface TrafficReport {
  requests: number;
  byStatus: Record<string, number>;
  messages: number;
  /** Unexpected answers (a send that was not accepted, a bad request that was): the check fails on any. */
  problems: string[];
}

export async function driveTraffic(opts: {
  apiBase: string;
  apiKey: string;
  senderId: string;
  webhookUrl: string;
  durationMs: number;
}): Promise<TrafficReport> {
  const report: TrafficReport = { requests: 0, byStatus: {}, messages: 0, problems: [] };
  const auth = { authorization: `Bearer ${opts.apiKey}`, "content-type": "application/json" };
  const call = async (method: string, path: string, body: unknown, expect: number, headers = auth) => {
    report.requests++;
    const res = await fetch(opts.apiBase + path, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    report.byStatus[res.status] = (report.byStatus[res.status] ?? 0) + 1;
    if (res.status !== expect && report.problems.length < 10)
      report.problems.push(`${method} ${path}: ${res.status} (expected ${expect}): ${text.slice(0, 200)}`);
    return { status: res.status, json: () => JSON.parse(text) as unknown };
  };
  const single = async (to: string, message: string) => {
    const r = await call("POST", "/api/v1/sms", { to, from: opts.senderId, message }, 202);
    if (r.status === 202) report.messages++;
    return r;
  };
  const bulk = async (to: string[], message: string, webhook: boolean) => {
    const body = { to, from: opts.senderId, message, ...(webhook ? { webhook_url: opts.webhookUrl } : {}) };
    const r = await call("POST", "/api/v1/sms/bulk", body, 202);
    if (r.status === 202) report.messages += to.length;
  };

  // Once each: the shapes of traffic a dashboard should show.
  const multipart = "Mhoro! Your statement is ready. ".repeat(8); // GSM-7, 256 chars: 2 segments
  const first = await single(msisdn(0), multipart);
  await single(msisdn(1), "Makorokoto 🎉 — UCS-2"); // one non-GSM-7 character: UCS-2
  for (const to of UNROUTABLE) await single(to, "unroutable on purpose");
  await call("POST", "/api/v1/sms", { from: opts.senderId, message: "no recipient" }, 400); // 400 legacy
  await call("POST", "/api/v1/sms/bulk", "{not json", 400); // 400 Kit
  await call("GET", "/api/v1/balance", undefined, 401, {
    authorization: "Bearer shr_not_a_key",
    "content-type": "application/json",
  });
  await call("GET", "/api/v1/sms/not-a-uuid", undefined, 400);
  if (first.status === 202) {
    const id = (first.json() as { id?: string }).id;
    if (id) await call("GET", `/api/v1/sms/${id}`, undefined, 200);
  }

  // Then steady load: a single send every 250 ms, a bulk of 150 every 5 s (the first and third
  // with a webhook_url), each bulk with one unroutable number among its recipients.
  const started = Date.now();
  let tick = 0;
  let bulks = 0;
  while (Date.now() - started < opts.durationMs) {
    const t = Date.now();
    if (tick % 20 === 0) {
      const to = Array.from({ length: 150 }, (_, i) => msisdn(bulks * 1000 + i + 2));
      to.push(UNROUTABLE[bulks % UNROUTABLE.length] ?? "0771234567");
      await bulk(to, `Bulk ${bulks + 1}: your order has shipped.`, bulks === 0 || bulks === 2);
      bulks++;
    }
    await single(msisdn(tick + 5), `Single ${tick}: your code is ${100000 + tick}`);
    if (tick % 8 === 0) await call("GET", "/api/v1/balance", undefined, 200);
    tick++;
    const wait = 250 - (Date.now() - t);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  return report;
}
