import { BlockList, isIP } from "node:net";

/**
 * What an API key may do. A key made without scopes has every one, as every key had before
 * scopes existed (the contract's behaviour); a key never grants another more than it has itself.
 */
export const SCOPES = [
  "sms:send",
  "sms:read",
  "inbound:read",
  "keys:manage",
  "webhooks:manage",
  "account:read",
] as const;
export type Scope = (typeof SCOPES)[number];

/** A key's scopes as stored: null is every scope. */
export type KeyScopes = readonly Scope[] | null;

export const isScope = (word: string): word is Scope => (SCOPES as readonly string[]).includes(word);

export function covers(held: KeyScopes, wanted: Scope): boolean {
  return held === null || held.includes(wanted);
}

/** Every scope of `asked` is held (null asks for every scope). */
export function coversAll(held: KeyScopes, asked: KeyScopes): boolean {
  if (held === null) return true;
  return (asked ?? SCOPES).every((scope) => held.includes(scope));
}

/**
 * The scope a route needs, by its path and method: a rule rather than a list, so an endpoint added
 * under a path is covered from the start. Null for the routes that need no key. The path is judged
 * as the router matches it: in any case, with or without a trailing slash.
 */
export function scopeOf(method: string, requestPath: string): Scope | null {
  const write = method !== "GET" && method !== "HEAD";
  const path = requestPath.toLowerCase().replace(/\/+$/, "");
  if (path === "/healthz" || path === "/readyz" || path === "/api/v1/openapi.json") return null;
  if (path.startsWith("/api/v1/api-tokens")) return "keys:manage";
  if (path.startsWith("/api/v1/webhook")) return "webhooks:manage";
  if (path === "/api/v1/balance" || path === "/api/v1/sender-ids" || path === "/api/v1/inbound-numbers")
    return "account:read";
  if (path.startsWith("/api/v1/inbound")) return "inbound:read";
  // Who may be sent to is the senders' business; reading the list is reading.
  if (path.startsWith("/api/v1/opt-outs")) return write ? "sms:send" : "sms:read";
  if (path.startsWith("/api/v1/sms")) return write && !path.endsWith("/preview") ? "sms:send" : "sms:read";
  return "account:read";
}

/** The client addresses a key may be used from (null: any), as a matcher. */
export function addressMatcher(cidrs: readonly string[] | null): ((address: string) => boolean) | null {
  if (cidrs === null || cidrs.length === 0) return null;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = "", bits] = cidr.split("/");
    const family = isIP(address) === 6 ? "ipv6" : "ipv4";
    list.addSubnet(address, Number(bits ?? (family === "ipv6" ? 128 : 32)), family);
  }
  return (address: string) => {
    // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
    const plain = address.startsWith("::ffff:") ? address.slice(7) : address;
    const family = isIP(plain) === 6 ? "ipv6" : "ipv4";
    return isIP(plain) !== 0 && list.check(plain, family);
  };
}

/** A CIDR (or a bare address) as its family, network address and prefix length. */
function parseRange(cidr: string): { family: "ipv4" | "ipv6"; address: string; bits: number } {
  const [address = "", bits] = cidr.split("/");
  const family = isIP(address) === 6 ? "ipv6" : "ipv4";
  return { family, address, bits: Number(bits ?? (family === "ipv6" ? 128 : 32)) };
}

/**
 * Every range of `asked` lies within one range of `held` (null: any address): a range as wide or
 * narrower, starting inside it. A range that only a union of held ranges covers is refused; it
 * can be asked for as those ranges.
 */
export function withinAddresses(held: readonly string[] | null, asked: readonly string[] | null): boolean {
  if (held === null || held.length === 0) return true;
  if (asked === null || asked.length === 0) return false;
  const heldRanges = held.map((cidr) => {
    const range = parseRange(cidr);
    const list = new BlockList();
    list.addSubnet(range.address, range.bits, range.family);
    return { ...range, list };
  });
  return asked.every((cidr) => {
    const range = parseRange(cidr);
    return heldRanges.some(
      (h) => h.family === range.family && h.bits <= range.bits && h.list.check(range.address, range.family),
    );
  });
}
