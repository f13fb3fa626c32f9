import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { clientAddressOf } from "../../src/intake/client-address.ts";

const request = (peer: string, forwardedFor?: string | string[]) =>
  ({
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
  }) as unknown as Request;

describe("the client address behind load balancers", () => {
  const behind = clientAddressOf(["10.0.0.0/24", "::1"]);

  it("with no trusted proxy, the socket's peer, whatever X-Forwarded-For says", () => {
    const direct = clientAddressOf([]);
    expect(direct(request("198.51.100.9", "203.0.113.7"))).toBe("198.51.100.9");
  });

  it("a peer that is not a trusted proxy is the client, even with the header", () => {
    expect(behind(request("198.51.100.9", "203.0.113.7"))).toBe("198.51.100.9");
  });

  it("a trusted proxy's request: the last address in the header that is not a proxy", () => {
    expect(behind(request("10.0.0.5", "203.0.113.7"))).toBe("203.0.113.7");
    expect(behind(request("::ffff:10.0.0.5", "203.0.113.7"))).toBe("203.0.113.7");
    expect(behind(request("::1", "203.0.113.7, 10.0.0.6"))).toBe("203.0.113.7");
    expect(behind(request("10.0.0.5", ["192.0.2.1", "203.0.113.7"]))).toBe("203.0.113.7");
  });

  it("never believes what the client wrote to the left of the first untrusted address", () => {
    expect(behind(request("10.0.0.5", "10.0.0.7, 192.0.2.1, 203.0.113.7"))).toBe("203.0.113.7");
    expect(behind(request("10.0.0.5", "203.0.113.7 , , 198.51.100.4"))).toBe("198.51.100.4");
  });

  it("a trusted proxy that sends no address is the client itself", () => {
    expect(behind(request("10.0.0.5"))).toBe("10.0.0.5");
    expect(behind(request("10.0.0.5", " , "))).toBe("10.0.0.5");
    expect(behind(request("10.0.0.5", "10.0.0.6"))).toBe("10.0.0.6");
  });

  it("TRUSTED_PROXIES takes addresses and CIDRs, comma-separated, and refuses anything else", () => {
    expect(loadConfig({}).TRUSTED_PROXIES).toEqual([]);
    expect(loadConfig({ TRUSTED_PROXIES: " 10.0.0.0/8, ::1 ,192.0.2.1" }).TRUSTED_PROXIES).toEqual([
      "10.0.0.0/8",
      "::1",
      "192.0.2.1",
    ]);
    for (const bad of ["10.0.0.0/33", "lb.internal", "10.0.0.1/8/2"])
      expect(() => loadConfig({ TRUSTED_PROXIES: bad }), bad).toThrow(ConfigError);
  });
});
