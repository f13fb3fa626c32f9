import http from "node:http";
import type { AddressInfo } from "node:net";
import { SIGNATURE_HEADER, verifySignature } from "../../src/webhooks/signing.ts";
import { wallMs } from "../peers/load-protocol.ts";

/**
 * The customer's callback endpoint: answers every POST at once with 200, checks its signature,
 * and records when each message's events arrived. A body may hold one event or, should delivery
 * batch them, an array of events (bare or under "events").
 */
export interface WebhookReceiver {
  url: string;
  setSecret(secret: string | null): void;
  /** Arrival times (wall ms) of each message's message.delivered events, in arrival order. */
  delivered: Map<string, number[]>;
  /** Events received per type, delivered included. */
  byType: Map<string, number>;
  requests: number;
  badSignatures: number;
  unreadable: number;
  /** Forget everything received so far (after the probe, before the measured run). */
  reset(): void;
  stop(): Promise<void>;
}

export interface Event {
  type?: unknown;
  data?: { id?: unknown };
}

/** The events of one callback body: one event, or an array of them (bare or under "events"). */
export function eventsOf(body: unknown): Event[] {
  if (Array.isArray(body)) return body as Event[];
  if (typeof body === "object" && body !== null) {
    const events = (body as { events?: unknown }).events;
    return Array.isArray(events) ? (events as Event[]) : [body as Event];
  }
  return [];
}

/**
 * One callback body read as a receiver reads it: whether its signature holds (always, with no
 * secret set), and each event's type and message id (null where it has none); null for a body
 * that is not JSON.
 */
export function readCallback(
  text: string,
  signature: unknown,
  secret: string | null,
): { signed: boolean; events: { type: string; id: string | null }[] } | null {
  const signed =
    secret === null || (typeof signature === "string" && verifySignature(secret, text, signature));
  let events: Event[];
  try {
    events = eventsOf(JSON.parse(text));
  } catch {
    return null;
  }
  return {
    signed,
    events: events.map((e) => ({
      type: typeof e.type === "string" ? e.type : "(no type)",
      id: typeof e.data?.id === "string" ? e.data.id : null,
    })),
  };
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let secret: string | null = null;
  const receiver = {
    delivered: new Map<string, number[]>(),
    byType: new Map<string, number>(),
    requests: 0,
    badSignatures: 0,
    unreadable: 0,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = wallMs();
      res.writeHead(200, { "content-length": "0" });
      res.end();
      receiver.requests++;
      const read = readCallback(
        Buffer.concat(chunks).toString("utf8"),
        req.headers[SIGNATURE_HEADER.toLowerCase()],
        secret,
      );
      if (read === null) {
        receiver.unreadable++;
        return;
      }
      if (!read.signed) receiver.badSignatures++;
      for (const { type, id } of read.events) {
        receiver.byType.set(type, (receiver.byType.get(type) ?? 0) + 1);
        if (id === null) {
          receiver.unreadable++;
          continue;
        }
        if (type !== "message.delivered") continue;
        const times = receiver.delivered.get(id);
        if (times) times.push(at);
        else receiver.delivered.set(id, [at]);
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/shiri/callbacks`,
    setSecret(s: string | null) {
      secret = s;
    },
    reset() {
      receiver.delivered.clear();
      receiver.byType.clear();
      receiver.requests = 0;
      receiver.badSignatures = 0;
      receiver.unreadable = 0;
    },
    stop() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
