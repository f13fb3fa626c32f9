import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * One event as a receiver saw it: the raw body of its request (what the signature covers) and the
 * event. A batch (a JSON array) gives one per event, sharing headers, body and `request`.
 */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  event: CallbackEvent;
  at: number;
  /** The request's number, from 1, in arrival order. */
  request: number;
  /** Whether the body was an array of events. */
  batched: boolean;
}

export interface CallbackEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown> & { id: string; status: string };
}

/** What to answer to a callback: a status, or "hang" (never answer until the receiver stops). */
export type Answer = number | "hang";

export interface Receiver {
  url: string;
  received: Received[];
  /** Requests being held open right now, and the most ever held at once. */
  open(): number;
  maxOpen(): number;
  /** Callbacks seen for one message, in arrival order. */
  forMessage(id: string): Received[];
  stop(): Promise<void>;
}

/** A real HTTP receiver on loopback; `answer` decides each response (default 200). */
export async function startReceiver(
  answer: (r: Received, attemptOfEvent: number) => Answer = () => 200,
): Promise<Receiver> {
  const received: Received[] = [];
  let requests = 0;
  const attempts = new Map<string, number>();
  const held = new Set<ServerResponse>();
  let maxOpen = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const parsed = JSON.parse(body) as CallbackEvent | CallbackEvent[];
      const batched = Array.isArray(parsed);
      const request = ++requests;
      const events = (batched ? parsed : [parsed]).map(
        (event): Received => ({ headers: req.headers, body, event, at: Date.now(), request, batched }),
      );
      received.push(...events);
      for (const r of events) attempts.set(r.event.id, (attempts.get(r.event.id) ?? 0) + 1);
      // A batch is answered as its first event would be.
      const first = events[0];
      const a = first ? answer(first, attempts.get(first.event.id) ?? 1) : 200;
      if (a === "hang") {
        held.add(res);
        maxOpen = Math.max(maxOpen, held.size);
        res.on("close", () => held.delete(res));
        return;
      }
      res.writeHead(a, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/sms`,
    received,
    open: () => held.size,
    maxOpen: () => maxOpen,
    forMessage: (id) => received.filter((r) => r.event.data.id === id),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
