import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signatureHeader } from "../../src/webhooks/signing.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * The documented verification snippets (docs/webhook-verification, shown in docs/api.md) run
 * against a real callback: sent by the service's webhook worker to a receiver on loopback,
 * signed with the account's secret. The Node snippet is imported as a receiver would; the
 * Python one is run by python3, which must be installed (the test fails without it).
 */
const SNIPPETS = fileURLToPath(new URL("../../docs/webhook-verification/", import.meta.url));

type Verify = (rawBody: string | Buffer, header: string, secret: string) => boolean;

interface Case {
  what: string;
  body: string;
  header: string;
  secret: string;
  valid: boolean;
}

let h: DispatchHarness;
let rx: Receiver;
let secret: string;

beforeAll(async () => {
  h = await startDispatchHarness({ env: { WEBHOOK_POLL_MS: "20" } });
  rx = await startReceiver();
  const res = await call(h.t.base, "POST", "/api/v1/webhook/secret", { headers: h.acct.headers });
  secret = (res.body as { data: { signing_secret: string } }).data.signing_secret;
});
afterAll(async () => {
  await rx.stop();
  await h.stop();
});

/** One real callback, then the ways it must and must not verify. */
async function cases(): Promise<Case[]> {
  const sent = await call(h.t.base, "POST", "/api/v1/sms", {
    headers: h.acct.headers,
    body: { to: "+263771234567", from: "SHIRI", message: "Mhoro — ✓", webhook_url: rx.url },
  });
  expect(sent.status).toBe(202);
  await waitFor(() => rx.received.length > 0, { what: "a callback" });
  const callback = rx.received[0];
  if (!callback) throw new Error("no callback");
  const header = String(callback.headers["shiri-signature"]);
  expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  const body = callback.body;
  const now = Math.floor(Date.now() / 1000);
  return [
    { what: "the callback as received", body, header, secret, valid: true },
    { what: "a changed body", body: body.replace("Mhoro", "Mhoro!"), header, secret, valid: false },
    { what: "another secret", body, header, secret: `${secret}x`, valid: false },
    {
      what: "a moved timestamp",
      body,
      header: header.replace(/^t=\d+/, `t=${now + 1}`),
      secret,
      valid: false,
    },
    {
      what: "signed 301 s ago",
      body,
      header: signatureHeader([secret], body, now - 301),
      secret,
      valid: false,
    },
    {
      what: "signed 200 s ago",
      body,
      header: signatureHeader([secret], body, now - 200),
      secret,
      valid: true,
    },
    {
      what: "during a rotation (new secret first)",
      body,
      header: signatureHeader(["whsec_new", secret], body, now),
      secret,
      valid: true,
    },
    { what: "no v1", body, header: `t=${now}`, secret, valid: false },
    { what: "no header", body, header: "", secret, valid: false },
    { what: "garbage", body, header: "t=abc,v1=zz", secret, valid: false },
  ];
}

describe("the documented webhook verification snippets", () => {
  it("Node (verify.mjs) and Python (verify.py) accept a real signed callback and refuse every forgery", async () => {
    const all = await cases();
    const snippet = pathToFileURL(`${SNIPPETS}verify.mjs`).href;
    const { verifyShiriSignature } = (await import(snippet)) as { verifyShiriSignature: Verify };

    const node = all.map((c) => verifyShiriSignature(c.body, c.header, c.secret));
    expect(node).toEqual(all.map((c) => c.valid));
    // A raw Buffer body, as express.raw() gives it, verifies too.
    const [received] = all;
    if (!received) throw new Error("no case");
    expect(verifyShiriSignature(Buffer.from(received.body), received.header, secret)).toBe(true);

    const python = spawnSync(
      "python3",
      [
        "-c",
        [
          "import json, sys",
          "sys.path.insert(0, sys.argv[1])",
          "from verify import verify_shiri_signature",
          "cases = json.load(sys.stdin)",
          "print(json.dumps([verify_shiri_signature(c['body'].encode('utf-8'), c['header'], c['secret']) for c in cases]))",
        ].join("\n"),
        SNIPPETS,
      ],
      { input: JSON.stringify(all), encoding: "utf8", timeout: 20_000 },
    );
    if (python.error) throw new Error(`python3 could not be run: ${python.error.message}`);
    expect(python.stderr).toBe("");
    expect(python.status).toBe(0);
    expect(JSON.parse(python.stdout)).toEqual(all.map((c) => c.valid));
  });
});
