import { createHmac, timingSafeEqual } from "node:crypto";

/** True when rawBody was signed by Shiri with secret, less than toleranceSeconds ago. */
export function verifyShiriSignature(rawBody, signatureHeader, secret, toleranceSeconds = 300) {
  let timestamp = Number.NaN;
  const signatures = [];
  for (const part of String(signatureHeader ?? "").split(",")) {
    const [key, value] = part.split("=", 2);
    if (key === "t" && /^\d+$/.test(value)) timestamp = Number(value);
    if (key === "v1" && value) signatures.push(Buffer.from(value, "hex"));
  }
  if (!Number.isInteger(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false; // too old: a replay
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest();
  // Any v1 will do: during a secret rotation there is one per secret, the new one first.
  return signatures.some((s) => s.length === expected.length && timingSafeEqual(s, expected));
}
