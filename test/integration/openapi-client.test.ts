import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import type { paths } from "../client/shiri-api.ts";
import { expectDocumented } from "../support/openapi-responses.ts";
import { startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * A TypeScript client generated from the OpenAPI document, as an integrator would make one:
 * openapi-typescript's types (test/client/shiri-api.ts, committed, `npm run generate:client`)
 * with openapi-fetch. The committed types are what the document gives; the client sends, reads
 * back and bulk sends against the running service; and its types hold the contract's `charge`, a
 * string on the single send and an integer in bulk, so code that gets them wrong does not compile.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TYPES = path.join(ROOT, "test/client/shiri-api.ts");

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(() => t.stop());

/** The client's fetch: every answer held to the document, as call() holds the other tests'. */
async function documentedFetch(request: Request): Promise<Response> {
  const res = await fetch(request);
  const url = new URL(request.url);
  const text = await res.clone().text();
  expectDocumented({
    method: request.method,
    url: url.pathname + url.search,
    status: res.status,
    headers: res.headers,
    text,
  });
  return res;
}

describe("a TypeScript client generated from the OpenAPI document", () => {
  it("is committed as the document gives it (generate:client --check)", () => {
    const check = spawnSync(process.execPath, ["--import", "tsx", "scripts/generate-client.ts", "--check"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
    expect(check.stdout).toContain("is up to date");
  });

  it("sends, retrieves and bulk sends against the running service; charge a string, then integers", async () => {
    const client = createClient<paths>({
      baseUrl: t.base,
      headers: { authorization: `Bearer ${acct.key}` },
      fetch: documentedFetch,
    });

    const sent = await client.POST("/api/v1/sms", {
      body: { to: "+263771234567", from: "SHIRI", message: "Mhoro" },
    });
    expect(sent.response.status).toBe(202);
    if (!sent.data) throw new Error(`not sent: ${JSON.stringify(sent.error)}`);
    expectTypeOf(sent.data.charge).toEqualTypeOf<string>();
    expect(sent.data).toMatchObject({ status: "enqueued", operator: "econet", delivered_at: null });
    expect(sent.data.charge).toMatch(/^\d+$/);

    const read = await client.GET("/api/v1/sms/{id}", { params: { path: { id: sent.data.id } } });
    expect(read.response.status).toBe(200);
    if (!read.data) throw new Error(`not read: ${JSON.stringify(read.error)}`);
    expectTypeOf(read.data.data.charge).toEqualTypeOf<string>();
    expect(read.data.data).toMatchObject({ id: sent.data.id, charge: sent.data.charge });

    const bulk = await client.POST("/api/v1/sms/bulk", {
      body: { to: ["+263771234567", "+263712345678"], from: "SHIRI", message: "Mhoro" },
    });
    expect(bulk.response.status).toBe(202);
    if (!bulk.data) throw new Error(`not sent: ${JSON.stringify(bulk.error)}`);
    expectTypeOf(bulk.data.data.charge).toEqualTypeOf<number>();
    expectTypeOf(bulk.data.data.items[0]?.charge).toEqualTypeOf<number | undefined>();
    const { data } = bulk.data;
    expect(data.items.map((i) => i.operator)).toEqual(["econet", "netone"]);
    expect(Number.isInteger(data.charge)).toBe(true);
    for (const item of data.items) expect(Number.isInteger(item.charge)).toBe(true);
    expect(data.items.reduce((sum, i) => sum + i.charge, 0)).toBe(data.charge);

    // An error comes back typed as the shapes the endpoint's statuses carry: legacy ones with
    // `error.type`, the 401 Kit-shaped with `error.code`; the client tells them apart by field.
    const refused = await client.POST("/api/v1/sms", {
      body: { to: "+263771234567", from: "NOPE", message: "Mhoro" },
    });
    expect(refused.response.status).toBe(400);
    const detail = refused.error?.error;
    expect(detail && "type" in detail ? detail.type : detail).toBe("ERR_BAD_REQUEST");
  });

  it("compiles code that uses charge as the contract types it, and refuses code that does not", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "shiri-client-"));
    try {
      const head = [
        'import createClient from "openapi-fetch";',
        `import type { paths } from ${JSON.stringify(TYPES)};`,
        'const client = createClient<paths>({ baseUrl: "http://localhost:3000" });',
        'const to = "+263771234567";',
        "export async function run() {",
        '  const sent = await client.POST("/api/v1/sms", { body: { to, from: "SHIRI", message: "Mhoro" } });',
        '  const bulk = await client.POST("/api/v1/sms/bulk", { body: { to: [to], from: "SHIRI", message: "Mhoro" } });',
        '  if (!sent.data || !bulk.data) throw new Error("not sent");',
      ];
      const program = (lines: string[]) => [...head, ...lines, "}", ""].join("\n");
      await writeFile(
        path.join(dir, "good.ts"),
        program([
          "  const single: string = sent.data.charge;",
          "  const total: number = bulk.data.data.charge;",
          "  const each: number[] = bulk.data.data.items.map((i) => i.charge);",
          "  return [single, total, each] as const;",
        ]),
      );
      await writeFile(
        path.join(dir, "bad.ts"),
        program([
          "  const single: number = sent.data.charge;",
          "  const total: string = bulk.data.data.charge;",
          '  await client.POST("/api/v1/sms", { body: { to, from: "SHIRI" } });',
          "  return [single, total] as const;",
        ]),
      );
      await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
      await writeFile(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            target: "ES2023",
            module: "NodeNext",
            moduleResolution: "NodeNext",
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            allowImportingTsExtensions: true,
            types: [],
            paths: { "openapi-fetch": [path.join(ROOT, "node_modules/openapi-fetch/dist/index.d.mts")] },
          },
          files: ["good.ts", "bad.ts"],
        }),
      );
      const tsc = spawnSync(
        path.join(ROOT, "node_modules/.bin/tsc"),
        ["-p", "tsconfig.json", "--pretty", "false"],
        {
          cwd: dir,
          encoding: "utf8",
          timeout: 60_000,
        },
      );
      const errors = tsc.stdout
        .split("\n")
        .filter((l) => /error TS\d+/.test(l))
        .map((l) => l.replace(/^(\S+)\((\d+),\d+\): error (TS\d+).*$/, "$1:$2 $3"));
      // The charge a number on the single send, a string in bulk, a send without its message (a
      // missing property: tsc words it TS2741 or, for a body type it elaborates less, TS2322).
      expect(
        errors.map((e) => e.replace(/ TS2741$/, " TS2322")),
        tsc.stdout,
      ).toEqual(["bad.ts:9 TS2322", "bad.ts:10 TS2322", "bad.ts:11 TS2322"]);
      expect(tsc.status).not.toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
