import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * The curl examples of docs/api.md's Endpoints section, run as written by bash against a live
 * service: each must answer 2xx (curl --fail-with-body stops the script at the first that does not).
 */
const doc = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
const run = promisify(execFile);

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
  // The redelivery example needs an event of the account: a webhook, then a send records one.
  await call(t.base, "PUT", "/api/v1/webhook", {
    headers: acct.headers,
    body: { url: "http://127.0.0.1:9/x" },
  });
  await call(t.base, "POST", "/api/v1/sms", {
    headers: acct.headers,
    body: { to: "+263771234567", from: "SHIRI", message: "event" },
  });
  // The inbound message example reads the account's latest: a handset's reply, as a link stores it.
  await t.service.pool.query(
    `INSERT INTO inbound_messages (id, account_id, link, operator, "from", "to", body, encoding, parts, complete, received_at)
     VALUES (gen_random_uuid(), $1, 'econet', 'econet', '263771234567', '33000', 'Yes please', 'gsm7', 1, true, now())`,
    [acct.id],
  );
});
afterAll(() => t.stop());

describe("docs/api.md", () => {
  it("every endpoint's curl example runs and succeeds", async () => {
    const endpoints = doc.slice(doc.indexOf("\n## Endpoints\n"), doc.indexOf("\n## Errors\n"));
    const sections = endpoints.split(/\n(?=### )/).filter((s) => s.startsWith("### "));
    const examples = sections.map((section) => {
      const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
      expect(blocks.length, section.split("\n")[0]).toBe(1);
      return blocks[0] ?? "";
    });
    expect(examples.length).toBeGreaterThanOrEqual(22);
    const script = [
      "set -euo pipefail",
      'curl() { command curl --fail-with-body --max-time 10 "$@"; echo; }',
      ...examples,
    ].join("\n");
    const { stdout } = await run("bash", ["-c", script], {
      env: { ...process.env, SHIRI_URL: t.base, SHIRI_KEY: acct.key },
      timeout: 60_000,
    });
    // Every answer printed is well-formed JSON, none of them an error (the ids captured by
    // `$(…)` and jq's list of paths are not answers).
    const answers = stdout.split("\n").filter((line) => line.startsWith("{"));
    expect(answers.length).toBeGreaterThanOrEqual(20);
    for (const answer of answers) expect(JSON.parse(answer).status).not.toBe("error");
    expect(stdout).toContain('"/api/v1/openapi.json"');
    // The export answers CSV, not JSON; the cancellations cancelled what their examples scheduled.
    expect(stdout).toContain("id,to,message,sender_id,operator,charge,");
    expect(stdout).toContain('"message":"sms cancelled"');
    expect(stdout).toContain('"message":"bulk sms cancelled"');
  });
});
