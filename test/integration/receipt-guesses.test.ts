/**
 * Receipts credited to the wrong message, against an SMSC that is not the simulator: one that
 * writes plain decimal ids, restarts its counter, and sends receipts early. Shiri on its default
 * settings (`auto` ids) must never read a decimal link's id as hex to reach another segment
 * (docs/decisions/0036), and never apply a receipt it kept aside to a segment submitted after it
 * came (an id reused after a restart).
 */
import { afterEach, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.ts";
import { sweepEarlyReceipts } from "../../src/receipts/apply-receipts.ts";
import { smppEnv } from "../support/dispatch.ts";
import { type ScriptedSubmit, startForeignSmsc } from "../support/foreign-smsc.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

const TEST_TIMEOUT_MS = 60_000;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A decimal SMSC on econet's link, scripted per destination, and the whole service pointed at it. */
async function decimalSmsc(script: Record<string, ScriptedSubmit>) {
  const smsc = startForeignSmsc({
    ids: { answer: "decimal", receipt: "decimal" },
    script: (destination) => script[destination.replace(/\D/g, "")],
  });
  const port = await smsc.start();
  stops.push(() => smsc.stop());
  const t = await startTestService(smppEnv({ econet: port }), "all");
  stops.push(() => t.stop());
  const acct = await t.account({ balance: 1_000_000_000 });
  return { smsc, t, acct };
}

async function send(t: TestService, acct: TestAccount, to: string): Promise<string> {
  const res = await call(t.base, "POST", "/api/v1/sms", {
    headers: acct.headers,
    body: { to, from: "SHIRI", message: "Mhoro, your code is 4821" },
  });
  if (res.status !== 202) throw new Error(`send failed: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

interface Row {
  status: string;
  operator_response: string;
  delivered: boolean;
}

async function row(t: TestService, id: string): Promise<Row | undefined> {
  const { rows } = await t.service.pool.query<Row>(
    "SELECT status, operator_response, delivered_at IS NOT NULL AS delivered FROM messages WHERE id = $1",
    [id],
  );
  return rows[0];
}

const accepted = (t: TestService, id: string, what: string) =>
  waitFor(async () => (await row(t, id))?.status === "success", { what });

describe("a decimal SMSC's receipt is never read as hex to reach another message", () => {
  it(
    "leaves a message answered 7001 alone when a receipt for 28673 (0x7001) comes from another handset",
    async () => {
      const { smsc, t, acct } = await decimalSmsc({ "263771000001": { answerId: "7001", receipt: false } });
      const x = await send(t, acct, "+263771000001");
      await accepted(t, x, "X accepted as 7001");
      // Acknowledged only once what it says is committed: applied, or kept aside.
      const status = await smsc.sendReceipt({ id: "28673", stat: "UNDELIV", handset: "263779999999" });
      expect(status).toBe(0);
      expect(await row(t, x)).toEqual({ status: "success", operator_response: "ESME_ROK", delivered: false });
      const kept = await t.service.pool.query("SELECT smsc_id FROM early_receipts");
      expect(kept.rows).toEqual([{ smsc_id: "28673" }]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "credits a receipt that overtakes its answer (28674) to its own message, not to one answered 7002",
    async () => {
      const { t, acct } = await decimalSmsc({
        "263771000002": { answerId: "7002", receipt: false },
        "263771000003": { answerId: "28674", answerAfterReceiptMs: 800 },
      });
      const x2 = await send(t, acct, "+263771000002");
      await accepted(t, x2, "X2 accepted as 7002");
      const y = await send(t, acct, "+263771000003");
      await waitFor(
        async () => (await row(t, y))?.delivered === true || (await row(t, x2))?.delivered === true,
        {
          timeoutMs: 20_000,
          what: "the receipt for 28674 applied",
        },
      ).catch(() => {});
      expect(await row(t, y)).toEqual({ status: "success", operator_response: "DELIVRD", delivered: true });
      expect(await row(t, x2)).toEqual({
        status: "success",
        operator_response: "ESME_ROK",
        delivered: false,
      });
    },
    TEST_TIMEOUT_MS,
  );
});

describe("a receipt kept aside is never applied to a message submitted after it came", () => {
  it(
    "leaves a message answered 999999999 undelivered when a receipt for that id came minutes before",
    async () => {
      const { smsc, t, acct } = await decimalSmsc({
        "263771000004": { answerId: "999999999", receipt: false },
      });
      await waitFor(() => smsc.boundSessions() > 0, { timeoutMs: 10_000, what: "the link bound" });
      // An id the SMSC had not issued (or issued before its counter restarted): kept aside.
      expect(await smsc.sendReceipt({ id: "999999999", stat: "DELIVRD", handset: "263771000004" })).toBe(0);
      const keptAs = async () =>
        (
          await t.service.pool.query<{ version: string }>(
            "SELECT xmin::text AS version FROM early_receipts WHERE smsc_id = '999999999'",
          )
        ).rows[0]?.version;
      const before = await keptAs();
      expect(before).toBeDefined();
      const z = await send(t, acct, "+263771000004");
      await accepted(t, z, "Z accepted as 999999999");
      // Z's segment recorded, the receipts kept for its id are taken and looked at: applied, or kept again.
      await waitFor(async () => (await keptAs()) !== before, {
        timeoutMs: 10_000,
        what: "the early receipt looked at",
      });
      const swept = await withTransaction(t.service.pool, (tx) =>
        sweepEarlyReceipts(tx, 600, () => ({ tolerant: true })),
      );
      expect(swept.applied).toBe(0);
      expect(await row(t, z)).toEqual({ status: "success", operator_response: "ESME_ROK", delivered: false });
      expect(await keptAs()).toBeDefined();
    },
    TEST_TIMEOUT_MS,
  );
});
