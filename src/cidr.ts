import { isIP } from "node:net";

/**
 * A CIDR as TRUSTED_PROXIES takes it: an address with an optional prefix length, IPv4 or IPv6.
 * Bits of the address past the prefix are ignored when it is matched.
 */
export function isCidr(text: string): boolean {
  return cidrParts(text) !== null;
}

/**
 * A CIDR as a key's allowed_ips stores it (Postgres's cidr type): as isCidr, with no bit of the
 * address set past the prefix (10.0.0.0/8, not 10.0.0.1/8) and no IPv6 zone (`%eth0`).
 */
export function isNetwork(text: string): boolean {
  const parts = cidrParts(text);
  if (parts === null || parts.address.includes("%")) return false;
  if (parts.bits === undefined) return true;
  const bytes = addressBytes(parts.address);
  return bytes.every((byte, i) => {
    const kept = Math.min(8, Math.max(0, (parts.bits as number) - i * 8));
    return (byte & (0xff >> kept)) === 0;
  });
}

function cidrParts(text: string): { address: string; bits: number | undefined } | null {
  const [address = "", bits, extra] = text.split("/");
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return null;
  if (bits === undefined) return { address, bits: undefined };
  const n = /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  return n >= 0 && n <= (version === 6 ? 128 : 32) ? { address, bits: n } : null;
}

/** The octets of an address isIP accepts (4 for IPv4, 16 for IPv6, a dotted IPv4 tail included). */
function addressBytes(address: string): number[] {
  if (isIP(address) === 4) return address.split(".").map(Number);
  const [head = "", tail] = address.split("::");
  const groups = (part: string | undefined): number[] =>
    part === undefined || part === ""
      ? []
      : part.split(":").flatMap((group) => {
          if (group.includes(".")) return group.split(".").map(Number);
          const value = Number.parseInt(group, 16);
          return [value >> 8, value & 0xff];
        });
  const front = groups(head);
  const back = groups(tail);
  return [...front, ...new Array<number>(16 - front.length - back.length).fill(0), ...back];
}
