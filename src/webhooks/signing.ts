import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Headers every callback carries; docs/api.md documents them for receivers. */
export const SIGNATURE_HEADER = "Shiri-Signature";
export const EVENT_ID_HEADER = "Shiri-Event-Id";
export const EVENT_TYPE_HEADER = "Shiri-Event-Type";
/** On a batch (a JSON array of events) instead of the two above. */
export const EVENT_COUNT_HEADER = "Shiri-Event-Count";

/** How old a signed timestamp a receiver should accept; the snippets in docs/webhook-verification use the same. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** A fresh signing secret: 32 random bytes, prefixed so a leaked one is recognisable in a scan. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

function hmacHex(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the secret>` (Stripe's scheme:
 * the timestamp is signed with the body, so a captured request cannot be replayed later with a
 * fresh timestamp). Signed anew at each attempt. One v1 per secret, the current one first: during
 * a rotation's grace period the previous secret signs too, and a receiver accepts any v1 it can
 * verify.
 */
export function signatureHeader(secrets: readonly string[], body: string, timestamp: number): string {
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${hmacHex(s, timestamp, body)}`)].join(",");
}

/** The receiver's check, as docs/webhook-verification does it (the tests hold them to one scheme). */
export function verifySignature(
  secret: string,
  body: string,
  header: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  let timestamp = Number.NaN;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const [key, value] = part.split("=", 2);
    if (key === "t") timestamp = Number(value);
    else if (key === "v1" && value) signatures.push(value);
  }
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, body), "hex");
  return signatures.some((s) => {
    const given = Buffer.from(s, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
