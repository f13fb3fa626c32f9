import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hasValidChecksum, isWellFormedToken, newToken } from "../../src/accounts/token-format.ts";

describe("key secrets", () => {
  it("keep the contract's form, shr_ and 43 characters, with a checksum a bogus one lacks", () => {
    for (let i = 0; i < 100; i++) {
      const token = newToken();
      expect(isWellFormedToken(token)).toBe(true);
      expect(hasValidChecksum(token)).toBe(true);
      // One character of the random part changed breaks the checksum.
      const other = token[10] === "A" ? "B" : "A";
      expect(hasValidChecksum(`${token.slice(0, 10)}${other}${token.slice(11)}`)).toBe(false);
    }
    const misses = Array.from({ length: 1000 }, () => `shr_${randomBytes(32).toString("base64url")}`).filter(
      hasValidChecksum,
    );
    expect(misses).toEqual([]);
  });
});
