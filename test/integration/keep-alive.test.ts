import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A load balancer reuses an idle connection for up to its own idle timeout (60 s is common):
 * the API must not close it first. Node's default (5 s) did, and a request sent on the
 * connection at that moment met a closed socket.
 */

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t?.stop());

const REQUEST = "GET /api/v1/balance HTTP/1.1\r\nHost: shiri\r\nConnection: keep-alive\r\n\r\n";

describe("keep-alive", () => {
  it("an idle connection is still open after Node's default 5 s and answers a second request", async () => {
    const socket = net.connect(Number(new URL(t.base).port), "127.0.0.1");
    let received = "";
    let closed = false;
    socket.on("data", (d) => {
      received += d.toString("latin1");
    });
    socket.on("close", () => {
      closed = true;
    });
    try {
      socket.write(REQUEST);
      await waitFor(() => received.includes("\r\n\r\n") && received.includes("}"), { what: "first answer" });
      expect(received).toMatch(/^HTTP\/1\.1 401/);
      expect(received).toMatch(/keep-alive: timeout=65/i);
      const idleUntil = Date.now() + 6_000;
      // Idle past Node's default keep-alive timeout; the connection must stay open all along.
      await waitFor(() => closed || Date.now() >= idleUntil, {
        timeoutMs: 7_000,
        intervalMs: 100,
        what: "idle",
      });
      expect(closed).toBe(false);
      received = "";
      socket.write(REQUEST);
      await waitFor(() => received.includes("}"), { what: "second answer on the same connection" });
      expect(received).toMatch(/^HTTP\/1\.1 401/);
    } finally {
      socket.destroy();
    }
  }, 15_000);
});
