/**
 * The bench's callback receiver in the load process (bench/peers/callback-server.ts): what it
 * streams to the bench for Shiri's signed webhook POSTs and Kannel's dlr-url GETs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type CallbackServer, startCallbackServer } from "../../bench/peers/callback-server.ts";
import type { LoadMessage } from "../../bench/peers/load-protocol.ts";
import { newSigningSecret, SIGNATURE_HEADER, signatureHeader } from "../../src/webhooks/signing.ts";

let server: CallbackServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

function collector() {
  const messages: LoadMessage[] = [];
  return { messages, send: (m: LoadMessage) => void messages.push(m) };
}

const callbacks = (messages: readonly LoadMessage[]) =>
  messages.flatMap((m) => (m.type === "callbacks" ? [m] : []));

describe("the callback receiver in the load process", () => {
  it("streams each webhook event with its arrival, and counts a bad signature", async () => {
    const out = collector();
    server = await startCallbackServer("webhook", out.send);
    const secret = newSigningSecret();
    server.setSecret(secret);
    const body = JSON.stringify([
      { type: "message.delivered", data: { id: "m1" } },
      { type: "message.failed", data: { id: "m2" } },
    ]);
    const signed = await fetch(server.url, {
      method: "POST",
      headers: { [SIGNATURE_HEADER]: signatureHeader([secret], body, Math.floor(Date.now() / 1000)) },
      body,
    });
    expect(signed.status).toBe(200);
    const unsigned = await fetch(server.url, {
      method: "POST",
      body: JSON.stringify({ type: "message.delivered", data: { id: "m3" } }),
    });
    expect(unsigned.status).toBe(200);
    server.flush();
    const batches = callbacks(out.messages);
    const arrivals = batches.flatMap((b) => b.arrivals);
    expect(arrivals.map(([type, id]) => [type, id])).toEqual([
      ["message.delivered", "m1"],
      ["message.failed", "m2"],
      ["message.delivered", "m3"],
    ]);
    expect(arrivals.every(([, , at, sent]) => at > 0 && sent === null)).toBe(true);
    expect(batches.reduce((n, b) => n + b.requests, 0)).toBe(2);
    expect(batches.reduce((n, b) => n + b.badSignatures, 0)).toBe(1);
  });

  it("reads a Kannel report's recipient (its digits), send time and type; counts one without", async () => {
    const out = collector();
    server = await startCallbackServer("dlr", out.send);
    await fetch(`${server.url}?id=%2B263771000000&sent=1000.5&type=1`);
    const answer = await fetch(`${server.url}?id=263771000001&sent=2000.25&type=2`);
    expect(answer.status).toBe(200);
    await fetch(`${server.url}?id=263771000002&type=1`);
    server.flush();
    const batches = callbacks(out.messages);
    expect(batches.flatMap((b) => b.arrivals).map(([type, id, , sent]) => [type, id, sent])).toEqual([
      ["1", "263771000000", 1000.5],
      ["2", "263771000001", 2000.25],
    ]);
    expect(batches.reduce((n, b) => n + b.requests, 0)).toBe(3);
    expect(batches.reduce((n, b) => n + b.unreadable, 0)).toBe(1);
  });
});
