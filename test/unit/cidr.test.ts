import { describe, expect, it } from "vitest";
import { isCidr, isNetwork } from "../../src/cidr.ts";

describe("addresses and CIDRs", () => {
  it("a trusted proxy may be written with bits past its prefix; a stored network may not", () => {
    for (const text of ["10.0.0.1/8", "::1/64", "2001:db8::1/32", "::ffff:1.2.3.4/120", "192.168.1.129/25"]) {
      expect(isCidr(text), text).toBe(true);
      expect(isNetwork(text), text).toBe(false);
    }
  });

  it("networks as Postgres's cidr type takes them", () => {
    for (const text of [
      "10.0.0.0/8",
      "10.0.0.1",
      "10.0.0.1/32",
      "0.0.0.0/0",
      "192.168.1.128/25",
      "::/0",
      "::1",
      "::1/128",
      "2001:db8::/32",
      "2001:db8:ff00::/40",
      "::ffff:1.2.3.0/120",
      "fe80::/10",
    ])
      expect(isNetwork(text), text).toBe(true);
  });

  it("a zone, a prefix past the address's length or text that is no address is neither", () => {
    expect(isCidr("fe80::1%eth0")).toBe(true);
    expect(isNetwork("fe80::1%eth0")).toBe(false);
    for (const text of ["10.0.0.0/33", "::/129", "10.0.0.0/8/8", "10.0.0.0/", "10.0.0/8", "x", ""]) {
      expect(isCidr(text), text).toBe(false);
      expect(isNetwork(text), text).toBe(false);
    }
  });
});
