import { spawnSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { signatureHeader } from "../../src/webhooks/signing.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * The documented verification snippets (docs/webhook-verification, shown in docs/api.md) run
 * against a real callback: sent by the service's webhook worker to a receiver on loopback,
 * signed with the account's secret. The Node snippet is imported as a receiver would; the
 * Python one is run by python3, which must be installed (the test fails without it); the Go one is
 * built by `go` and the PHP one run by `php`. Those two are not needed by `npm install && npm
 * test`: without them their tests are skipped, saying why, except in CI (CI=true), where .ci/run
 * installs them (golang-go, php-cli) and a missing one fails the test instead.
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

/** CI sets CI=true: there every snippet runs, and a missing tool is a failure, never a skip. */
const IN_CI = process.env.CI === "true" || process.env.CI === "1";

/** Whether a command runs here (`<tool> <args>` exits 0). */
const runs = (command: string, args: string[]) => spawnSync(command, args, { encoding: "utf8" }).status === 0;

/**
 * Skips the test, with why, when the tool is not installed here, or fails it in CI. Returns
 * nothing when the tool is there.
 */
function requireTool(ctx: TestContext, available: boolean, tool: string, debianPackage: string): void {
  if (available) return;
  const why = `${tool} is not installed (Debian: apt-get install ${debianPackage}); CI installs it and runs this test`;
  if (IN_CI) throw new Error(`CI=true but ${why.split(";")[0]}: .ci/run must install ${debianPackage}`);
  ctx.skip(why);
}

const GO_MAIN = `package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"verifytest/shiri"
)

type verifyCase struct {
	Body   string \`json:"body"\`
	Header string \`json:"header"\`
	Secret string \`json:"secret"\`
}

func main() {
	var cases []verifyCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	results := make([]bool, len(cases))
	for i, c := range cases {
		results[i] = shiri.VerifyShiriSignature([]byte(c.Body), c.Header, c.Secret, 5*time.Minute)
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
`;

/**
 * verify.go, as it is, built into a program that reads cases as JSON on stdin and prints the
 * verdicts: built before the callback is signed, so the time the build takes never ages a case.
 * Offline (GOPROXY=off, the standard library only), with a build cache of the user's own.
 */
async function buildGoVerifier(dir: string): Promise<string> {
  await mkdir(path.join(dir, "shiri"), { recursive: true });
  await writeFile(path.join(dir, "go.mod"), "module verifytest\n\ngo 1.19\n");
  await copyFile(path.join(SNIPPETS, "verify.go"), path.join(dir, "shiri", "verify.go"));
  await writeFile(path.join(dir, "main.go"), GO_MAIN);
  const binary = path.join(dir, "verify");
  const build = spawnSync("go", ["build", "-o", binary, "."], {
    cwd: dir,
    encoding: "utf8",
    timeout: 240_000,
    env: {
      ...process.env,
      GOCACHE: path.join(os.tmpdir(), `shiri-go-build-${os.userInfo().uid}`),
      GOPATH: path.join(dir, "gopath"),
      GOFLAGS: "-mod=mod",
      GOPROXY: "off",
      GOTOOLCHAIN: "local",
      GOTELEMETRY: "off",
    },
  });
  if (build.error) throw new Error(`go build could not be run: ${build.error.message}`);
  expect(build.stderr).toBe("");
  expect(build.status).toBe(0);
  return binary;
}

/** Runs a verifier on the cases (JSON on stdin) and returns its verdicts (JSON on stdout). */
function verdicts(command: string, args: string[], all: Case[]): unknown {
  const run = spawnSync(command, args, { input: JSON.stringify(all), encoding: "utf8", timeout: 20_000 });
  if (run.error) throw new Error(`${command} could not be run: ${run.error.message}`);
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout);
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
  // This send's own callback: freshly signed, whichever test asks and however long it ran before.
  const id = (sent.body as { id: string }).id;
  await waitFor(() => rx.forMessage(id).length > 0, { what: "a callback" });
  const callback = rx.forMessage(id)[0];
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

  it("Go (verify.go) accepts a real signed callback and refuses every forgery", async (ctx) => {
    requireTool(ctx, runs("go", ["version"]), "go", "golang-go");
    const dir = await mkdtemp(path.join(os.tmpdir(), "shiri-verify-go-"));
    try {
      const verifier = await buildGoVerifier(dir);
      const all = await cases();
      expect(verdicts(verifier, [], all)).toEqual(all.map((c) => c.valid));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it("PHP (verify.php) accepts a real signed callback and refuses every forgery", async (ctx) => {
    requireTool(ctx, runs("php", ["--version"]), "php", "php-cli");
    const all = await cases();
    const program = [
      "require $argv[1];",
      "$cases = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);",
      "echo json_encode(array_map(fn ($c) => verify_shiri_signature($c['body'], $c['header'], $c['secret']), $cases));",
    ].join("\n");
    expect(verdicts("php", ["-r", program, "--", `${SNIPPETS}verify.php`], all)).toEqual(
      all.map((c) => c.valid),
    );
  });
});
