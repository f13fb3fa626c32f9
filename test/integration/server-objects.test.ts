import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { describe, expect, it } from "vitest";
import { serverOptionsFor } from "../../src/intake/server-objects.ts";

/**
 * The server's request and response objects are made with the app's prototypes, so Express's
 * per-request setPrototypeOf finds nothing to change (src/intake/server-objects.ts), and they
 * still work as node's and Express's objects.
 */
describe("the HTTP server's request and response objects", () => {
  it("are born with the app's prototypes and answer as Express answers", async () => {
    const app = express();
    app.get("/probe", (req, res) => {
      res.status(201).json({ query: req.query.x, path: req.path });
    });
    const seen: boolean[] = [];
    const server = createServer(serverOptionsFor(app), (req, res) => {
      seen.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response);
      app(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/probe?x=1`);
      expect(answer.status).toBe(201);
      expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await answer.json()).toEqual({ query: "1", path: "/probe" });
      expect(seen).toEqual([true]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
