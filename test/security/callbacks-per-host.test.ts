import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort as closedPort } from "../../bench/lib/shiri-process.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Issue 28, item 4: callbacks to one host are capped across all accounts and all workers
 * (WEBHOOK_CONCURRENCY_PER_HOST). Two worker processes share one database; three accounts send to
 * one receiver (under three paths) that answers each request after 40 ms, so slots keep coming
 * free and both workers go for each one. pg-boss counts a host's active jobs in each fetch's own
 * snapshot: before fetches took an advisory lock one after another, this test saw 5 and 6 requests
 * at once against a cap of 3 (three runs out of three).
 */
const CAP = 3;
const EVENTS = 3 * 40;
let t: TestService;
let accounts: TestAccount[];

/** A receiver on loopback that answers each callback 200 after `delayMs`: how many it holds at once. */
async function slowReceiver(delayMs: number) {
  let open = 0;
  let maxOpen = 0;
  let answered = 0;
  const server: Server = createHttpServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    req.resume();
    setTimeout(() => {
      open--;
      answered++;
      res.writeHead(200).end();
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    maxOpen: () => maxOpen,
    answered: () => answered,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
let rx: Awaited<ReturnType<typeof slowReceiver>>;

beforeAll(async () => {
  const port = String(await closedPort());
  const smpp = Object.fromEntries(
    ["ECONET", "NETONE", "TELECEL"].flatMap((op) => [
      [`SMPP_${op}_HOST`, "127.0.0.1"],
      [`SMPP_${op}_PORT`, port],
    ]),
  );
  t = await startTestService(
    {
      ...smpp,
      WEBHOOK_CONCURRENCY_PER_HOST: String(CAP),
      // One event a job: every event is a job of its own, all of one host, for the workers to race for.
      WEBHOOK_BATCH_SIZE: "1",
      WEBHOOK_POLL_MS: "5",
      WEBHOOK_TIMEOUT_MS: "10000",
    },
    "all",
  );
  await t.startAnother("worker");
  accounts = [await t.account(), await t.account(), await t.account()];
  rx = await slowReceiver(40);
});
afterAll(async () => {
  await rx.stop();
  await t.stop();
});

describe("callbacks to one host", () => {
  it("never have more requests in flight than the cap, whatever the accounts and workers", async () => {
    for (const [n, account] of accounts.entries()) {
      const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
        headers: account.headers,
        body: {
          to: Array.from({ length: EVENTS / 3 }, (_, i) => `+26377${String(5_000_000 + n * 100 + i)}`),
          from: "SHIRI",
          message: "x",
          // Another path and query per account: one host all the same.
          webhook_url: `${rx.url}/${n}?account=${n}`,
        },
      });
      expect(res.status).toBe(202);
    }
    // Each answer frees a slot that both workers, fetching every 5 ms, go for at once.
    await waitFor(() => rx.answered() === EVENTS, {
      what: `${EVENTS} callbacks answered`,
      timeoutMs: 20_000,
    });
    expect(rx.maxOpen()).toBe(CAP);
  });
});
