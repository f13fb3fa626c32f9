import { createHash, randomBytes } from "node:crypto";

/**
 * API key secrets: `shr_` and 43 base64url characters (32 bytes). Keys made since checksums were
 * added end their 32 bytes with 4 bytes of SHA-256 over the 28 random ones before them, so a
 * well-formed token that cannot be a key is known without the database. Keys made before carry no
 * checksum: while any of them is active, a token without a valid checksum must still be looked up.
 */
const TOKEN_PREFIX = "shr_";
const TOKEN_PATTERN = /^shr_[A-Za-z0-9_-]{43}$/;
const RANDOM_BYTES = 28;
const CHECK_BYTES = 4;

export const isWellFormedToken = (token: string): boolean => TOKEN_PATTERN.test(token);

function checkOf(random: Buffer): Buffer {
  return createHash("sha256").update(random).digest().subarray(0, CHECK_BYTES);
}

/** A new key secret, with its checksum. */
export function newToken(): string {
  const random = randomBytes(RANDOM_BYTES);
  return TOKEN_PREFIX + Buffer.concat([random, checkOf(random)]).toString("base64url");
}

/** Whether a well-formed token carries a valid checksum (every key made since checksums has one). */
export function hasValidChecksum(token: string): boolean {
  if (!isWellFormedToken(token)) return false;
  const bytes = Buffer.from(token.slice(TOKEN_PREFIX.length), "base64url");
  if (bytes.length !== RANDOM_BYTES + CHECK_BYTES) return false;
  return checkOf(bytes.subarray(0, RANDOM_BYTES)).equals(bytes.subarray(RANDOM_BYTES));
}
