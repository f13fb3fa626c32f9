/**
 * A second signal while `shiri start` drains. Ctrl-C under `npm start` delivers SIGINT twice to the
 * service (the terminal signals the whole foreground group, and npm's run-script forwards the
 * SIGINT it got to its child as well); a supervisor may repeat SIGTERM. The drain must not be cut
 * off by the repeat: a request in flight is answered and the process exits 0.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/shiri-process.ts";
import { startApiProcess } from "../support/api-process.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { waitFor } from "../support/wait-for.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe("shiri start and a repeated signal while it stops", () => {
  it("goes on draining (exit 0) when SIGINT comes twice, as Ctrl-C under npm start sends it", async () => {
    const port = await freePort();
    const api = await startApiProcess(db.url, port);
    let socket: net.Socket | undefined;
    try {
      await waitFor(async () => api.output().includes('"api listening"'), {
        timeoutMs: 60_000,
        intervalMs: 50,
        what: "the API to listen",
      });
      // A request in flight while it stops: its body still coming, so the drain waits for it.
      socket = net.connect(port, "127.0.0.1");
      await new Promise<void>((resolve) => socket?.once("connect", () => resolve()));
      socket.on("error", () => {});
      socket.write(
        "POST /api/v1/sms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
      );
      await new Promise((r) => setTimeout(r, 200));

      api.child.kill("SIGINT");
      await waitFor(async () => api.output().includes('"shutting down"'), {
        timeoutMs: 5_000,
        intervalMs: 20,
        what: "the first signal's shutdown",
      });
      // The second SIGINT of the same Ctrl-C (npm forwarding it), a moment later.
      api.child.kill("SIGINT");
      // Before, the handlers were gone after the first: the second SIGINT killed it mid-drain.
      expect(await api.exited).toEqual({ code: 0, signal: null });
    } finally {
      socket?.destroy();
      api.kill();
    }
  }, 60_000);
});
