/**
 * A bulk send may repeat one number as often as it likes (the contract bills each), unless
 * BULK_MAX_REPEATS caps it: then a send naming a number more often, in any of its written forms,
 * is a validation error on `to` and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let capped: TestService;
let open: TestService;
let acctCapped: TestAccount;
let acctOpen: TestAccount;

beforeAll(async () => {
  [capped, open] = await Promise.all([startTestService({ BULK_MAX_REPEATS: "2" }), startTestService()]);
  [acctCapped, acctOpen] = await Promise.all([capped.account(), open.account()]);
});
afterAll(async () => {
  await capped?.stop();
  await open?.stop();
});

const SAME = ["+263771234567", "263771234567", "0771234567"];
const bulk = (t: TestService, a: TestAccount, to: string[]) =>
  call(t.base, "POST", "/api/v1/sms/bulk", {
    headers: a.headers,
    body: { to, from: "SHIRI", message: "again" },
  });

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

  it("is billed as often as it is named when there is no cap (the contract's behaviour)", async () => {
    const res = await bulk(open, acctOpen, SAME);
    expect(res.status).toBe(202);
    expect((res.body as { data: { total: number } }).data.total).toBe(3);
  });
});
