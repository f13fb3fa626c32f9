import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call } from "../support/service.ts";
import { settledEvents } from "../support/webhook-events.ts";

/**
 * WEBHOOK_PIPELINE_DEPTH through the whole service (API, dispatch to the carrier simulators,
 * receipts, webhook worker): a receiver of raw sockets that answers each request 5 ms after it
 * came sees requests arrive while earlier ones on the same connection are unanswered, and still
 * gets each event once.
 */
let h: DispatchHarness;
let receiver: net.Server;
const sockets = new Set<net.Socket>();
const eventIds: string[] = [];
/** Requests that arrived on a connection while another on it was unanswered. */
let pipelined = 0;

beforeAll(async () => {
  receiver = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let buffered = "";
    let unanswered = 0;
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      for (;;) {
        const end = buffered.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buffered.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.slice(end + 4 + length);
        eventIds.push(/shiri-event-id: (\S+)/i.exec(head)?.[1] ?? "");
        if (unanswered > 0) pipelined++;
        unanswered++;
        setTimeout(() => {
          unanswered--;
          if (!socket.destroyed) socket.write("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
        }, 5);
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  h = await startDispatchHarness({
    env: { WEBHOOK_POLL_MS: "20", WEBHOOK_PIPELINE_DEPTH: "8" },
  });
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => receiver.close(resolve));
  await h.stop();
});

it("pipelines a job's callbacks when configured, and each event arrives once", async () => {
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const to = Array.from({ length: 60 }, (_, i) => `+26377${String(2_000_000 + i)}`);
  const res = await call(h.t.base, "POST", "/api/v1/sms/bulk", {
    headers: h.acct.headers,
    body: { to, from: "SHIRI", message: "pipelined", webhook_url: url },
  });
  expect(res.status).toBe(202);
  const ids = (res.body as { data: { items: { id: string }[] } }).data.items.map((m) => m.id);
  // enqueued, success and delivered for each message.
  const rows = await settledEvents(h.pool, ids, ids.length * 3);
  expect(rows.every((r) => r.state === "delivered" && r.attempts === 1)).toBe(true);
  expect(eventIds.slice().sort()).toEqual(rows.map((r) => r.id).sort());
  expect(pipelined).toBeGreaterThan(0);
});
