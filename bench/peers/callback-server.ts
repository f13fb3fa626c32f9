/**
 * The customer's callback endpoint inside the load process (load-generator.ts, `receiver` in its
 * plan), as issue 27 measured: one Node process sends the load and takes the callbacks, apart
 * from both systems. It answers every request at once with 200 and streams what arrived to the
 * bench (bench/pipeline/remote-receiver.ts keeps the tally), every 50 ms.
 *
 * "webhook": Shiri's signed POSTs, one event or an array of them (bare or under "events");
 * "dlr": Kannel's GETs of a dlr-url carrying id (the recipient, Kannel's %p), sent and type (%d).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SIGNATURE_HEADER } from "../../src/webhooks/signing.ts";
import { readCallback } from "../pipeline/webhook-receiver.ts";
import { type Arrival, digits, type LoadMessage, wallMs } from "./load-protocol.ts";

const FLUSH_MS = 50;

export interface CallbackServer {
  url: string;
  setSecret(secret: string | null): void;
  /** Drops what was not yet streamed (the bench forgets the probe's callbacks at the same time). */
  reset(): void;
  /** Streams what arrived since the last time, if anything. */
  flush(): void;
  stop(): Promise<void>;
}

export async function startCallbackServer(
  kind: "webhook" | "dlr",
  send: (message: LoadMessage) => void,
): Promise<CallbackServer> {
  let secret: string | null = null;
  let pending = { arrivals: [] as Arrival[], requests: 0, badSignatures: 0, unreadable: 0 };
  const fresh = () => ({ arrivals: [] as Arrival[], requests: 0, badSignatures: 0, unreadable: 0 });

  const onWebhook = (text: string, signature: unknown, at: number) => {
    const read = readCallback(text, signature, secret);
    if (read === null) {
      pending.unreadable++;
      return;
    }
    if (!read.signed) pending.badSignatures++;
    for (const { type, id } of read.events) {
      if (id === null) pending.unreadable++;
      pending.arrivals.push([type, id, at, null]);
    }
  };

  const onDlr = (path: string, at: number) => {
    const query = new URL(path, "http://receiver").searchParams;
    const id = digits(query.get("id") ?? "");
    const sentText = query.get("sent");
    const sent = sentText ? Number(sentText) : Number.NaN;
    if (!id || !Number.isFinite(sent)) {
      pending.unreadable++;
      return;
    }
    pending.arrivals.push([query.get("type") ?? "", id, at, sent]);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = wallMs();
      res.writeHead(200, { "content-length": "0" });
      res.end();
      pending.requests++;
      if (kind === "dlr") onDlr(req.url ?? "/", at);
      else onWebhook(Buffer.concat(chunks).toString("utf8"), req.headers[SIGNATURE_HEADER.toLowerCase()], at);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const flush = () => {
    if (pending.requests === 0 && pending.arrivals.length === 0) return;
    const batch = pending;
    pending = fresh();
    send({ type: "callbacks", ...batch });
  };
  const timer = setInterval(flush, FLUSH_MS);
  return {
    url: `http://127.0.0.1:${port}/${kind === "dlr" ? "dlr" : "shiri/callbacks"}`,
    setSecret(s) {
      secret = s;
    },
    reset() {
      pending = fresh();
    },
    flush,
    stop() {
      clearInterval(timer);
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
