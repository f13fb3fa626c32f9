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
