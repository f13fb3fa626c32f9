import { type LookupAddress, lookup } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

/**
 * Where callbacks must not go in production: addresses that reach the service's own host or
 * network rather than the sender's server (SSRF). Checked after DNS resolution, on the very
 * addresses the connection then uses, so a name that resolves differently a second later
 * (DNS rebinding) cannot slip through.
 */
const V4: ReadonlyArray<[string, number]> = [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata lives here)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255 broadcast
];
const V6: ReadonlyArray<[string, number]> = [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b::", 96], // NAT64: would reach an IPv4 address we cannot vet here
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["2001::", 32], // Teredo, embeds an IPv4 address
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4, embeds an IPv4 address
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
];

const refused = new BlockList();
for (const [net, prefix] of V4) refused.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of V6) refused.addSubnet(net, prefix, "ipv6");

/** True for an address on the public internet; IPv4-mapped IPv6 is judged by its IPv4 part. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !refused.check(address, family === 4 ? "ipv4" : "ipv6");
}

export class RefusedAddressError extends Error {
  readonly code = "ERR_WEBHOOK_ADDRESS_REFUSED";
  constructor(host: string) {
    super(`destination ${host} resolves to a private, loopback or reserved address`);
  }
}

/** The URL's host when it is an IP literal (brackets removed), else null. */
export function ipLiteral(url: URL): string | null {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : null;
}

/**
 * A `lookup` for http.request that refuses the whole name when any of its addresses is not
 * public, and otherwise hands the socket exactly the addresses it checked. IP literals never
 * reach a lookup, so the caller checks those itself (see ipLiteral).
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, "", 0);
    if (addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address)))
      return callback(new RefusedAddressError(hostname), "", 0);
    if (options.all) return (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
};
