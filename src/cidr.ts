import { isIP } from "node:net";

/**
 * A CIDR as a key's allowed_ips and TRUSTED_PROXIES take it: an address with an optional prefix
 * length, IPv4 or IPv6.
 */
export function isCidr(text: string): boolean {
  const [address = "", bits, extra] = text.split("/");
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  const n = /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  return n >= 0 && n <= (version === 6 ? 128 : 32);
}
