import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Response } from "express";
import { describe, expect, it } from "vitest";
import { drained } from "../../src/intake/routes/export-sms.ts";

/**
 * The CSV export waits for a full response to drain before its next page. A client that went away
 * while a page was being read leaves a destroyed response, to which a write answers false and whose
 * "close" has already been emitted: the wait must end at once, or the export's handler (its page,
 * its listeners) is kept for ever, one for each download cancelled so.
 */
describe("the export's wait for a response to drain", () => {
  it("ends at once when the client has already gone", async () => {
    let outcome: Promise<string> = Promise.resolve("no request");
    const server = http.createServer((req, res) => {
      outcome = (async () => {
        req.socket.destroy();
        await once(res, "close");
        const waited = drained(res as unknown as Response).then(() => "ended");
        const still = new Promise<string>((resolve) =>
          setTimeout(() => resolve("still waiting"), 500).unref(),
        );
        return Promise.race([waited, still]);
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve) => {
        const req = http.get({ host: "127.0.0.1", port, path: "/export" });
        req.on("error", () => resolve());
        req.on("close", () => resolve());
      });
      expect(await outcome).toBe("ended");
    } finally {
      server.close();
    }
  });
});
