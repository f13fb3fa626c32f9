import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ipLiteral,
  isPublicAddress,
  publicOnlyLookup,
  RefusedAddressError,
} from "../../src/webhooks/address-guard.ts";
import { callbackConnections } from "../../src/webhooks/callback-connections.ts";
import { postCallback } from "../../src/webhooks/post-callback.ts";

describe("which addresses callbacks may reach in production", () => {
  it.each([
    "0.0.0.0",
    "10.1.2.3",
    "100.64.0.1",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.8",
    "192.168.1.1",
    "198.18.0.1",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "64:ff9b::a00:1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "ff02::1",
    "2001:db8::1",
    // IPv4-compatible (::/96, deprecated): some stacks still route it to the IPv4 address.
    "::127.0.0.1",
    "::7f00:1",
    "::a00:1",
    "::8.8.8.8",
    "::2",
    // IPv4-translated (SIIT), NAT64 local use, discard, site-local, Teredo, 6to4, ORCHID,
    // benchmarking, the newer documentation block, SRv6, and unassigned space outside 2000::/3.
    "::ffff:0:7f00:1",
    "64:ff9b:1::a00:1",
    "100::1",
    "fec0::1",
    "2001::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2002:7f00:1::1",
    "2001:10::1",
    "2001:2::1",
    "3fff::1",
    "5f00::1",
    "4000::1",
    "1::1",
    "fe80::1%eth0",
    // IPv4 mapped onto its private and reserved blocks, and the rest of IPv4's special blocks.
    "::ffff:169.254.169.254",
    "::ffff:192.168.0.1",
    "0.1.2.3",
    "192.0.2.1",
    "192.88.99.1",
    "198.51.100.1",
    "203.0.113.1",
    "240.0.0.1",
    "not an address",
    "",
  ])("%s is refused", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    "8.8.8.8",
    "41.57.64.1",
    "172.32.0.1",
    "100.128.0.1",
    "2c0f:f8f0::1",
    "2606:4700::1111",
    "::ffff:8.8.8.8",
    "2001:4860:4860::8888",
    "2a00:1450:4001::1",
  ])("%s is allowed", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it("reads IP literals out of URLs, the normalised forms included", () => {
    expect(ipLiteral(new URL("http://127.0.0.1:8080/x"))).toBe("127.0.0.1");
    expect(ipLiteral(new URL("http://2130706433/"))).toBe("127.0.0.1");
    expect(ipLiteral(new URL("http://0x7f.1/"))).toBe("127.0.0.1");
    expect(ipLiteral(new URL("http://[::1]/"))).toBe("::1");
    expect(ipLiteral(new URL("http://[::ffff:127.0.0.1]/"))).toBe("::ffff:7f00:1");
    expect(ipLiteral(new URL("https://hooks.example.com/"))).toBeNull();
  });

  it("refuses a name that resolves to loopback, after resolution", async () => {
    const err = await new Promise<Error | null>((resolve) =>
      publicOnlyLookup("localhost", { all: true }, (e) => resolve(e)),
    );
    expect(err).toBeInstanceOf(RefusedAddressError);
  });
});

describe("posting a callback", () => {
  let hanging: Server;
  let ok: Server;
  let hits = 0;
  const connections = callbackConnections();
  const portOf = (s: Server) => (s.address() as AddressInfo).port;
  const cb = (url: string) => ({
    url,
    events: [{ id: "e1", type: "message.success" }],
    batched: false,
    body: "{}",
    secrets: ["s"],
  });

  beforeAll(async () => {
    hanging = createServer(() => {
      hits++;
    });
    ok = createServer((_req, res) => {
      hits++;
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", r));
    await new Promise<void>((r) => ok.listen(0, "127.0.0.1", r));
  });
  afterAll(async () => {
    connections.close();
    hanging.closeAllConnections();
    ok.closeAllConnections();
    await new Promise((r) => hanging.close(r));
    await new Promise((r) => ok.close(r));
  });

  it("gives up on a receiver that does not answer within the timeout, to retry later", async () => {
    const outcome = await postCallback(cb(`http://127.0.0.1:${portOf(hanging)}/`), {
      timeoutMs: 200,
      allowPrivate: true,
      connections,
    });
    expect(outcome).toEqual({
      kind: "retry",
      status: null,
      error: "no answer within 200 ms",
      timedOut: true,
    });
  });

  it("retries a refused connection", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = portOf(closed);
    await new Promise((r) => closed.close(r));
    const outcome = await postCallback(cb(`http://127.0.0.1:${port}/`), {
      timeoutMs: 1000,
      allowPrivate: true,
      connections,
    });
    expect(outcome).toMatchObject({
      kind: "retry",
      status: null,
      error: expect.stringContaining("ECONNREFUSED"),
    });
  });

  it("delivers to loopback when private addresses are allowed (development)", async () => {
    const outcome = await postCallback(cb(`http://127.0.0.1:${portOf(ok)}/`), {
      timeoutMs: 1000,
      allowPrivate: true,
      connections,
    });
    expect(outcome).toEqual({ kind: "delivered", status: 204 });
  });

  it.each(["127.0.0.1", "localhost", "[::ffff:127.0.0.1]"])(
    "refuses %s for good when they are not, without connecting",
    async (host) => {
      const before = hits;
      const outcome = await postCallback(cb(`http://${host}:${portOf(ok)}/`), {
        timeoutMs: 1000,
        allowPrivate: false,
        connections,
      });
      expect(outcome).toMatchObject({
        kind: "failed",
        status: null,
        error: expect.stringMatching(/private, loopback or reserved/),
      });
      expect(hits).toBe(before);
    },
  );
});
