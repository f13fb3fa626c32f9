import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLI_TEST_TIMEOUT_MS,
  type CliResult,
  failedWith,
  inParallel,
  oneJsonObject,
  PARALLEL_RUNS,
  shiri,
  usageError,
} from "../support/cli.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * `shiri account send-defaults` (issue 30), run for real against the database of a running API:
 * what it sets is what the account's next send takes, without a restart.
 */
let t: TestService;
let acct: TestAccount;
const run = (...args: string[]) => shiri(t.database.url, args);

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(() => t?.stop());

describe("shiri account send-defaults", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("shows none at first, sets smart encoding and a window, and the API's next send takes them", async () => {
    expect(oneJsonObject(await run("account", "send-defaults", "--account", acct.id))).toEqual({
      account_id: acct.id,
      smart_encoding: false,
      deliver_between: null,
    });
    const set = oneJsonObject(
      await run(
        "account",
        "send-defaults",
        "--account",
        acct.id.toUpperCase(),
        "--smart-encoding",
        "on",
        "--deliver-between",
        "22:00-06:00",
        "--time-zone",
        "africa/harare",
      ),
    );
    const window = { start: "22:00", end: "06:00", time_zone: "Africa/Harare" };
    expect(set).toEqual({ account_id: acct.id, smart_encoding: true, deliver_between: window });

    const sent = await call(t.base, "POST", "/api/v1/sms", {
      headers: acct.headers,
      body: { to: "+263771234567", from: "SHIRI", message: "It\u2019s late" },
    });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ message: "It's late", smart_encoded: true, deliver_between: window });

    // The window off, smart encoding kept.
    expect(
      oneJsonObject(await run("account", "send-defaults", "--account", acct.id, "--deliver-between", "off")),
    ).toEqual({ account_id: acct.id, smart_encoding: true, deliver_between: null });
    const after = await call(t.base, "POST", "/api/v1/sms", {
      headers: acct.headers,
      body: { to: "+263771234567", from: "SHIRI", message: "It\u2019s now" },
    });
    expect(after.body).toMatchObject({ smart_encoded: true });
    expect(after.body).not.toHaveProperty("deliver_between");
  });

  it("refuses bad words before any database (exit 2), and an unknown account (exit 1)", async () => {
    const account = ["account", "send-defaults", "--account", acct.id];
    const results = await inParallel(
      [
        [...account, "--deliver-between", "8-20", "--time-zone", "UTC"],
        [...account, "--deliver-between", "08:00-20:00"],
        [...account, "--deliver-between", "08:00-20:00", "--time-zone", "Mars/Olympus"],
        [...account, "--deliver-between", "08:00-08:00", "--time-zone", "UTC"],
        [...account, "--time-zone", "UTC"],
        [...account, "--smart-encoding", "yes"],
      ],
      PARALLEL_RUNS,
      (args) => run(...args),
    );
    const expected = [
      /--deliver-between must be HH:MM-HH:MM \(or off\)/,
      /--deliver-between needs --time-zone/,
      /--time-zone must be an IANA time zone name/,
      /must end at another time than it starts/,
      /--time-zone goes with --deliver-between/,
      /--smart-encoding must be one of on, off/,
    ];
    results.forEach((res: CliResult, i) => {
      usageError(res, expected[i] as RegExp, "account send-defaults", `case ${i}`);
    });
    failedWith(
      await run("account", "send-defaults", "--account", "00000000-0000-4000-8000-000000000000"),
      /no account 00000000-0000-4000-8000-000000000000/,
    );
  });
});

describe("shiri text", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  /** Nothing listens here: `shiri text` never reaches for a database. */
  const offline = (...args: string[]) => shiri("postgres://postgres@127.0.0.1:1/nothing", args);

  it("works a text out as the send would: template, smart encoding, segments, prices, window, validity", async () => {
    const [filled, plain] = await inParallel(
      [
        [
          "text",
          "Hi {{name}} \u2013 it\u2019s {{amount}}\u2026",
          "--variables",
          '{"name":"Rudo","amount":12.5}',
          "--smart-encoding",
          "--send-at",
          "2030-01-01T03:00:00+02:00",
          "--validity-period",
          "86400",
          "--deliver-between",
          "08:00-20:00",
          "--time-zone",
          "africa/harare",
        ],
        ["text", `${"a".repeat(150)}\u2019`],
      ],
      PARALLEL_RUNS,
      (args) => offline(...args),
    );
    expect(oneJsonObject(filled as CliResult)).toEqual({
      template: "Hi {{name}} \u2013 it\u2019s {{amount}}\u2026",
      message: "Hi Rudo - it's 12.5...",
      message_as_written: "Hi Rudo \u2013 it\u2019s 12.5\u2026",
      smart_encoded: true,
      replaced: 3,
      encoding: "gsm7",
      segments: 1,
      units: 22,
      currency: "USD",
      charge: { econet: 450, netone: 400, telecel: 380 },
      // Due at 01:00 UTC (03:00 in Harare), outside the window: it goes at 08:00 Harare, and expires
      // a day after it was due, not after the window opened.
      send_at: "2030-01-01T06:00:00.000Z",
      expires_at: "2030-01-02T01:00:00.000Z",
      validity_period: 86400,
      deliver_between: { start: "08:00", end: "20:00", time_zone: "Africa/Harare" },
    });
    expect(oneJsonObject(plain as CliResult)).toMatchObject({
      encoding: "ucs2",
      segments: 3,
      charge: { econet: 1350, netone: 1200, telecel: 1140 },
    });
  });

  it("exit 1 for a missing variable or a window past the validity; exit 2 for bad words", async () => {
    const results = await inParallel(
      [
        ["text", "Hi {{name}}", "--variables", "{}"],
        [
          "text",
          "x",
          "--send-at",
          "2030-01-01T03:00:00+02:00",
          "--validity-period",
          "60",
          "--deliver-between",
          "08:00-20:00",
          "--time-zone",
          "Africa/Harare",
        ],
        ["text", "x", "--validity-period", "59"],
        ["text", "x", "--variables", "[1]"],
        // As /sms/batch refuses it: String() writes 1e+21.
        ["text", "You owe {{amount}}", "--variables", '{"amount":1e21}'],
      ],
      PARALLEL_RUNS,
      (args) => offline(...args),
    );
    failedWith(results[0] as CliResult, /the template needs name/);
    failedWith(
      results[1] as CliResult,
      /the window opens at 2030-01-01T06:00:00.000Z, after the validity ends/,
    );
    usageError(results[2] as CliResult, /--validity-period must be 60 to 259200 seconds/, "text");
    usageError(results[3] as CliResult, /--variables must be a JSON object/, "text");
    usageError(
      results[4] as CliResult,
      /--variables: amount must be a string: this number cannot be written exactly/,
      "text",
    );
  });
});
