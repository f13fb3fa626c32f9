/**
 * A bulk send may repeat one number as often as it likes (the contract bills each), unless
 * BULK_MAX_REPEATS caps it: then a send naming a number more often, in any of its written forms
 * (one number as opt-outs count it), is a validation error on `to` and writes nothing, and its
 * preview answers the same error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let capped: TestService;
let once: TestService;
let open: TestService;
let acctCapped: TestAccount;
let acctOnce: TestAccount;
let acctOpen: TestAccount;

beforeAll(async () => {
  [capped, once, open] = await Promise.all([
    startTestService({ BULK_MAX_REPEATS: "2" }),
    startTestService({ BULK_MAX_REPEATS: "1" }),
    startTestService(),
  ]);
  [acctCapped, acctOnce, acctOpen] = await Promise.all([capped.account(), once.account(), open.account()]);
});
afterAll(async () => {
  await capped?.stop();
  await once?.stop();
  await open?.stop();
});

const SAME = ["+263771234567", "263771234567", "0771234567"];
const bulk = (t: TestService, a: TestAccount, to: string[], path = "/api/v1/sms/bulk") =>
  call(t.base, "POST", path, {
    headers: a.headers,
    body: { to, from: "SHIRI", message: "again" },
  });
const preview = (t: TestService, a: TestAccount, to: string[]) => bulk(t, a, to, "/api/v1/sms/preview");
const refusedOnce = {
  error: {
    code: "VALIDATION_ERROR",
    validation_errors: [{ field: "to", description: "must not name one number more than once" }],
  },
};

describe("one number repeated in a bulk send", () => {
  it("is refused past the cap, whatever form it is written in, and nothing is written", async () => {
    const res = await bulk(capped, acctCapped, SAME);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: {
        code: "VALIDATION_ERROR",
        validation_errors: [{ field: "to", description: "must not name one number more than 2 times" }],
      },
    });
    const { rows } = await capped.service.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages",
    );
    expect(rows[0]?.n).toBe(0);
    expect((await bulk(capped, acctCapped, SAME.slice(0, 2))).status).toBe(202);
  });

  it("is refused by the preview as by the send", async () => {
    const twice = ["+263771234567", "+263771234567"];
    const res = await preview(once, acctOnce, twice);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject(refusedOnce);
    expect((await bulk(once, acctOnce, twice)).body).toMatchObject(refusedOnce);
    expect((await preview(capped, acctCapped, SAME)).body).toMatchObject({
      error: {
        validation_errors: [{ field: "to", description: "must not name one number more than 2 times" }],
      },
    });
    expect((await preview(once, acctOnce, ["+263771234567", "+263712345678"])).status).toBe(200);
  });

  it("counts a number written with 00 as the same number, as opt-outs do", async () => {
    for (const to of [
      ["+263771234567", "00263771234567"],
      ["263771234567", "0771234567"],
    ]) {
      const res = await bulk(once, acctOnce, to);
      expect(res.status, to.join()).toBe(400);
      expect(res.body).toMatchObject(refusedOnce);
      expect((await preview(once, acctOnce, to)).body).toMatchObject(refusedOnce);
    }
    // A number that is not Zimbabwean keeps its digits: 0123 and 263123 are two numbers.
    expect((await bulk(once, acctOnce, ["0123", "263123"])).status).toBe(202);
  });

  it("is billed as often as it is named when there is no cap (the contract's behaviour)", async () => {
    const res = await bulk(open, acctOpen, SAME);
    expect(res.status).toBe(202);
    expect((res.body as { data: { total: number } }).data.total).toBe(3);
  });
});
