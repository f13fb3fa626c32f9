import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort as closedPort } from "../../bench/lib/shiri-process.ts";
import { type Receiver, startReceiver } from "../integration/webhooks-receiver.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { type DnsServer, startDnsServer } from "./support/dns-server.ts";

/**
 * Issue 28, item 4: a DNS name that changes address between lookups cannot bring a callback to a
 * private address in production. A DNS server on loopback (WEBHOOK_DNS_SERVERS points callbacks'
 * lookups at it) answers the name with a public address on one lookup and with the receiver's,
 * 127.0.0.1, on the next: what a rebinding attacker serves to get past a check made on one lookup
 * and a connection made on another. The guard judges the addresses of the very lookup each
 * connection uses, so the receiver must get nothing in production; in development (private
 * addresses allowed) the same name does reach it, which shows the name really leads there.
 *
 * The public address is AS112's (2620:4f:8000::6, the sink for stray traffic): on a machine with
 * no route out, connecting to it fails at once (a retry); on one whose gateway drops it, the
 * connection is cut by the callback timeout, kept short here; where there is a route it reaches a
 * server that keeps nothing.
 */
const NAME = "rebind.shiri.test";
const PUBLIC = "2620:4f:8000::6";
const EVENTS = 4;

let dns: DnsServer;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  // Lookup n asks A and AAAA once each: odd lookups get only the public AAAA, even ones only 127.0.0.1.
  dns = await startDnsServer(({ name, type, count }) => {
    if (name !== NAME) return [];
    if (type === "AAAA") return count % 2 === 1 ? [PUBLIC] : [];
    return count % 2 === 0 ? ["127.0.0.1"] : [];
  });
});
afterAll(async () => {
  await rx.stop();
  await dns.stop();
});

async function service(env: Record<string, string>): Promise<{ t: TestService; account: TestAccount }> {
  const port = String(await closedPort());
  const smpp = Object.fromEntries(
    ["ECONET", "NETONE", "TELECEL"].flatMap((op) => [
      [`SMPP_${op}_HOST`, "127.0.0.1"],
      [`SMPP_${op}_PORT`, port],
      // Production refuses the simulators' passwords.
      [`SMPP_${op}_PASSWORD`, `${op.slice(0, 3).toLowerCase()}-real`],
    ]),
  );
  const t = await startTestService(
    {
      ...smpp,
      ...env,
      WEBHOOK_DNS_SERVERS: dns.address,
      WEBHOOK_POLL_MS: "20",
      WEBHOOK_RETRY_BASE_MS: "50",
      WEBHOOK_TIMEOUT_MS: "300",
    },
    "all",
  );
  return { t, account: await t.account() };
}

async function send(t: TestService, account: TestAccount): Promise<string[]> {
  const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
    headers: account.headers,
    body: {
      to: Array.from({ length: EVENTS }, (_, i) => `+26377${String(6_000_000 + i)}`),
      from: "SHIRI",
      message: "x",
      webhook_url: `http://${NAME}:${new URL(rx.url).port}/hooks/sms`,
    },
  });
  expect(res.status).toBe(202);
  return (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
}

const eventsOf = async (t: TestService, messages: string[]) =>
  (
    await t.service.pool.query<{ state: string; attempts: number; last_status: number | null }>(
      "SELECT state, attempts, last_status FROM webhook_events WHERE message_id = ANY ($1)",
      [messages],
    )
  ).rows;

describe("a name that changes address between lookups", () => {
  it("brings no callback to a private address in production: each is refused on the lookup it connects with", async () => {
    const { t, account } = await service({ SHIRI_ENV: "production" });
    try {
      const messages = await send(t, account);
      await waitFor(async () => (await eventsOf(t, messages)).every((e) => e.state === "failed"), {
        what: "every event failed for good",
        timeoutMs: 20_000,
      });
      expect(rx.received).toHaveLength(0);
      // Both answers were served, to the lookups of the connections themselves.
      const answered = dns.log.filter((q) => q.name === NAME).flatMap((q) => q.answered);
      expect(answered).toContain(PUBLIC);
      expect(answered).toContain("127.0.0.1");
      const refused = (await t.service.metrics.webhookDeliveries.get()).values.find(
        (v) => v.labels.outcome === "refused",
      );
      expect(refused?.value).toBe(EVENTS);
    } finally {
      await t.stop();
    }
  });

  it("does reach the receiver where private addresses are allowed (development)", async () => {
    const { t, account } = await service({ SHIRI_ENV: "development", START_SIMULATORS: "false" });
    try {
      const messages = await send(t, account);
      await waitFor(async () => (await eventsOf(t, messages)).every((e) => e.state === "delivered"), {
        what: "every event delivered",
        timeoutMs: 20_000,
      });
      expect(rx.received).toHaveLength(EVENTS);
    } finally {
      await t.stop();
    }
  });
});
