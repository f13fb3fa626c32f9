import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One callback as a receiver saw it: raw body (what the signature covers) and parsed event. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  event: CallbackEvent;
  at: number;
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
  const attempts = new Map<string, number>();
  const held = new Set<ServerResponse>();
  let maxOpen = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const r: Received = {
        headers: req.headers,
        body,
        event: JSON.parse(body) as CallbackEvent,
        at: Date.now(),
      };
      received.push(r);
      const attempt = (attempts.get(r.event.id) ?? 0) + 1;
      attempts.set(r.event.id, attempt);
      const a = answer(r, attempt);
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
