import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort as closedPort } from "../../bench/lib/shiri-process.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * Production mode refuses callbacks to private addresses, at delivery, after DNS resolution.
 * The whole service runs (role "all"); its carriers point at a closed port, so nothing is
 * dispatched and the only events are those recorded at the send.
 */
let t: TestService;
let acct: TestAccount;
let rx: Receiver;

beforeAll(async () => {
  const port = String(await closedPort());
  const smpp = Object.fromEntries(
    ["ECONET", "NETONE", "TELECEL"].flatMap((op) => [
      [`SMPP_${op}_HOST`, "127.0.0.1"],
      [`SMPP_${op}_PORT`, port],
      // Production refuses the simulators' passwords.
      [`SMPP_${op}_PASSWORD`, `${op.slice(0, 3).toLowerCase()}-real`],
    ]),
  );
  t = await startTestService({ ...smpp, SHIRI_ENV: "production", WEBHOOK_POLL_MS: "20" }, "all");
  acct = await t.account();
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.stop();
  await t.stop();
});

async function refusedCount(): Promise<number> {
  const metric = await t.service.metrics.webhookDeliveries.get();
  return metric.values.find((v) => v.labels.outcome === "refused")?.value ?? 0;
}

describe("production mode", () => {
  it("refuses loopback webhook_urls, by IP literal or by a name resolving to one; the events fail for good and are counted", async () => {
    const port = new URL(rx.url).port;
    const urls = [rx.url, `http://localhost:${port}/hooks`, `http://[::ffff:127.0.0.1]:${port}/hooks`];
    const before = await refusedCount();
    const ids: string[] = [];
    for (const webhook_url of urls) {
      const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
        headers: acct.headers,
        body: { to: ["+263771234567", "0771234567"], from: "SHIRI", message: "x", webhook_url },
      });
      expect(res.status).toBe(202); // accepted: the address is judged at delivery, after DNS
      ids.push(...(res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id));
    }
    const settled = async () =>
      (
        await t.service.pool.query<{
          state: string;
          attempts: number;
          last_status: null;
          last_error: string;
        }>(
          "SELECT state, attempts, last_status, last_error FROM webhook_events WHERE message_id = ANY ($1)",
          [ids],
        )
      ).rows;
    await waitFor(async () => (await settled()).filter((e) => e.state === "failed").length === 6, {
      what: "six refused events",
    });
    for (const e of await settled()) {
      expect(e).toMatchObject({ state: "failed", attempts: 1, last_status: null });
      expect(e.last_error).toMatch(/private, loopback or reserved address/);
    }
    expect(rx.received).toHaveLength(0);
    expect((await refusedCount()) - before).toBe(6);
  });

  it("refuses an account webhook on a private network the same way", async () => {
    const put = await call(t.base, "PUT", "/api/v1/webhook", {
      headers: acct.headers,
      body: { url: "http://10.0.0.1:8080/hooks" },
    });
    expect(put.status).toBe(200);
    const res = await call(t.base, "POST", "/api/v1/sms", {
      headers: acct.headers,
      body: { to: "+263771234567", from: "SHIRI", message: "x" },
    });
    const id = (res.body as { id: string }).id;
    await waitFor(
      async () =>
        (
          await t.service.pool.query(
            "SELECT 1 FROM webhook_events WHERE message_id = $1 AND state = 'failed'",
            [id],
          )
        ).rowCount === 1,
      { what: "the refused event" },
    );
  });
});
