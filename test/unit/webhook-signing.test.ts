import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newSigningSecret, signatureHeader, verifySignature } from "../../src/webhooks/signing.ts";

const secret = "whsec_test";
const body = '{"id":"e1","type":"message.success"}';
const now = 1_750_000_000;

describe("callback signatures", () => {
  it("are t=<unix>,v1=<hex HMAC-SHA256 of t.body>", () => {
    const header = signatureHeader([secret], body, now);
    const expected = createHmac("sha256", secret).update(`${now}.${body}`).digest("hex");
    expect(header).toBe(`t=${now},v1=${expected}`);
  });

  it("verify with the right secret and body within five minutes", () => {
    const header = signatureHeader([secret], body, now);
    expect(verifySignature(secret, body, header, now)).toBe(true);
    expect(verifySignature(secret, body, header, now + 300)).toBe(true);
    expect(verifySignature(secret, body, header, now - 300)).toBe(true);
  });

  it("fail for another secret, a changed body, a stale or future timestamp, or a moved timestamp", () => {
    const header = signatureHeader([secret], body, now);
    expect(verifySignature("whsec_other", body, header, now)).toBe(false);
    expect(verifySignature(secret, body.replace("success", "failed"), header, now)).toBe(false);
    expect(verifySignature(secret, body, header, now + 301)).toBe(false);
    expect(verifySignature(secret, body, header, now - 301)).toBe(false);
    const replayed = header.replace(`t=${now}`, `t=${now + 600}`);
    expect(verifySignature(secret, body, replayed, now + 600)).toBe(false);
  });

  it("accept any one matching v1 among several, and reject malformed headers", () => {
    const good = signatureHeader([secret], body, now);
    const v1 = good.split("v1=")[1];
    expect(verifySignature(secret, body, `t=${now},v1=${"0".repeat(64)},v1=${v1}`, now)).toBe(true);
    for (const bad of ["", "garbage", `t=${now}`, `v1=${v1}`, `t=abc,v1=${v1}`, `t=${now},v1=zz`])
      expect(verifySignature(secret, body, bad, now)).toBe(false);
  });

  it("carry one v1 per secret, the current one first, each verifying on its own", () => {
    const header = signatureHeader([secret, "whsec_old"], body, now);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(header.startsWith(signatureHeader([secret], body, now))).toBe(true);
    expect(verifySignature(secret, body, header, now)).toBe(true);
    expect(verifySignature("whsec_old", body, header, now)).toBe(true);
    expect(verifySignature("whsec_other", body, header, now)).toBe(false);
  });

  it("secrets are fresh, prefixed and 256 bits", () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newSigningSecret()).not.toBe(a);
  });
});
