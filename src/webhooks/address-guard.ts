import { type LookupAddress, lookup } from "node:dns";
import { Resolver } from "node:dns/promises";
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
/**
 * IPv6 is judged by an allow-list: only global unicast (2000::/3) is public, so every other
 * block — unspecified, loopback, IPv4-compatible (::/96), IPv4-translated (::ffff:0:0:0/96),
 * NAT64 (64:ff9b::/96 and /48), discard, unique-local, link-local, site-local, multicast, SRv6
 * and whatever is assigned later — is refused without being named. Inside 2000::/3 these are
 * not public either:
 */
const V6_INSIDE_GLOBAL: ReadonlyArray<[string, number]> = [
  ["2001::", 23], // IETF protocol assignments: Teredo (embeds IPv4), benchmarking, ORCHID
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4, embeds an IPv4 address
  ["3fff::", 20], // documentation (RFC 9637)
];

const refusedV4 = new BlockList();
for (const [net, prefix] of V4) refusedV4.addSubnet(net, prefix, "ipv4");
const globalUnicastV6 = new BlockList();
globalUnicastV6.addSubnet("2000::", 3, "ipv6");
const refusedInsideGlobalV6 = new BlockList();
for (const [net, prefix] of V6_INSIDE_GLOBAL) refusedInsideGlobalV6.addSubnet(net, prefix, "ipv6");
/** IPv4-mapped IPv6 (::ffff:a.b.c.d): the socket reaches the IPv4 address, so that is what is judged. */
const mappedV4 = new BlockList();
mappedV4.addSubnet("::ffff:0:0", 96, "ipv6");

/** True for an address on the public internet; IPv4-mapped IPv6 is judged by its IPv4 part. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !refusedV4.check(address, "ipv4");
  if (family !== 6) return false;
  // A BlockList of IPv4 rules matches an IPv4-mapped IPv6 address by its IPv4 part.
  if (mappedV4.check(address, "ipv6")) return !refusedV4.check(address, "ipv6");
  return globalUnicastV6.check(address, "ipv6") && !refusedInsideGlobalV6.check(address, "ipv6");
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

/** Resolves a name to every address it has (as dns.lookup with `all`), family as asked (0: both). */
export type Resolve = (
  hostname: string,
  family: number,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), as every lookup uses by default. */
export const systemResolve: Resolve = (hostname, family, callback) =>
  lookup(hostname, { family, all: true }, callback);

/**
 * DNS servers of one's own (WEBHOOK_DNS_SERVERS: IP addresses, "ip:port", IPv6 in brackets): A and
 * AAAA records asked of them, never the hosts file. A name with neither is ENOTFOUND.
 */
export function resolverAt(servers: readonly string[]): Resolve {
  const resolver = new Resolver();
  resolver.setServers([...servers]);
  const ask = (kind: 4 | 6, hostname: string): Promise<LookupAddress[]> =>
    (kind === 4 ? resolver.resolve4(hostname) : resolver.resolve6(hostname)).then(
      (addresses) => addresses.map((address) => ({ address, family: kind })),
      () => [],
    );
  return (hostname, family, callback) => {
    const kinds: Array<4 | 6> = family === 4 ? [4] : family === 6 ? [6] : [4, 6];
    Promise.all(kinds.map((kind) => ask(kind, hostname))).then((found) => {
      const addresses = found.flat();
      if (addresses.length > 0) return callback(null, addresses);
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      err.code = "ENOTFOUND";
      callback(err, []);
    });
  };
}

/**
 * A `lookup` for http.request that refuses the whole name when any of its addresses is not
 * public, and otherwise hands the socket exactly the addresses it checked. IP literals never
 * reach a lookup, so the caller checks those itself (see ipLiteral).
 */
export function publicOnlyLookupVia(resolve: Resolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options.family === 4 || options.family === 6 ? options.family : 0, (err, addresses) => {
      if (err) return callback(err, "", 0);
      if (addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address)))
        return callback(new RefusedAddressError(hostname), "", 0);
      handOver(addresses, options.all === true, callback);
    });
  };
}

export const publicOnlyLookup: LookupFunction = publicOnlyLookupVia(systemResolve);

/** A `lookup` through `resolve` that judges nothing (callbacks to private addresses allowed). */
export function lookupVia(resolve: Resolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options.family === 4 || options.family === 6 ? options.family : 0, (err, addresses) => {
      if (err) return callback(err, "", 0);
      handOver(addresses, options.all === true, callback);
    });
  };
}

function handOver(addresses: LookupAddress[], all: boolean, callback: Parameters<LookupFunction>[2]): void {
  if (all) {
    (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
    return;
  }
  const first = addresses[0] as LookupAddress;
  callback(null, first.address, first.family);
}
