/**
 * Searches and exports cannot take the whole pool: past their budget of requests in flight, one
 * more is answered 429 at once, and a place frees as soon as one ends, whether it finished or its
 * client went away. Over real HTTP on loopback, with the gate the API puts before both routes.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expensiveGate } from "../../src/intake/expensive-gate.ts";

const held: Response[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  const app = express();
  app.use(
    (_req, res, next) => {
      res.locals.errorShape = "kit";
      next();
    },
    expensiveGate(2),
    (_req, res) => {
      held.push(res);
    },
  );
  server = createServer(app);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const waitFor = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe("the searches' and exports' own budget", () => {
  it("refuses one more than it allows in flight, and frees a place when one ends or is dropped", async () => {
    const slow = new AbortController();
    const first = fetch(`${base}/a`, { signal: slow.signal }).catch(() => null);
    const second = fetch(`${base}/b`);
    await waitFor(() => held.length === 2);
    const third = await fetch(`${base}/c`);
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("1");
    expect(await third.json()).toMatchObject({ error: { code: "TOO_MANY_REQUESTS" } });
    // One answered, one whose client went away: both places free again.
    held[1]?.end("done");
    await second;
    slow.abort();
    await first;
    await waitFor(() => held.every((r) => r.destroyed || r.writableEnded));
    const again = [fetch(`${base}/d`), fetch(`${base}/e`)];
    await waitFor(() => held.length === 4);
    expect(held.length).toBe(4);
    for (const r of held.slice(2)) r.end("done");
    for (const r of await Promise.all(again)) expect(r.status).toBe(200);
  });
});
