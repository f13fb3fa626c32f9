import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audit } from "../../src/audit/audit.ts";
import { loadConfig } from "../../src/config.ts";
import { balanceFromLedger } from "../../src/ledger/ledger.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { createLogger } from "../../src/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { enqueueDispatch } from "../../src/queue/boss.ts";
import { startSamplers } from "../../src/samplers.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call, type TestAccount } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Scheduled sends (send_at) and cancellation through the whole service and the SMPP simulator:
 * a scheduled message reaches the carrier at its send_at, never before; its charge is held from
 * acceptance; DELETE before dispatch releases the hold once; after dispatch it is refused.
 */
let h: DispatchHarness;
let acct: TestAccount;
const PRICE = 450; // econet, one segment

beforeAll(async () => {
  h = await startDispatchHarness();
  acct = await h.t.account({ balance: 1_000_000 });
});
afterAll(() => h?.stop());

const inSeconds = (s: number) => new Date(Date.now() + s * 1_000);
const api = (method: string, path: string, body?: unknown, who: TestAccount = acct) =>
  call(h.t.base, method, path, { headers: who.headers, ...(body === undefined ? {} : { body }) });
const available = async (who: TestAccount = acct) => (await balanceNow(h.pool, who.id))?.available ?? -1;
const submitsOf = (text: string) => h.sims.get("econet").accepted.filter((a) => a.text === text);
let numbers = 0;
const econetNumber = () => `+26377${String(5_000_000 + numbers++)}`;

async function ledgerOf(ids: readonly string[]): Promise<{ kind: string; amount: number }[]> {
  const { rows } = await h.pool.query<{ kind: string; amount: number }>(
    `SELECT kind, amount::int FROM ledger_entries
      WHERE message_id = ANY($1) OR bulk_id IN (SELECT bulk_id FROM messages WHERE id = ANY($1))
      ORDER BY id`,
    [ids],
  );
  return rows;
}

describe("a scheduled single send", () => {
  it("is accepted enqueued with its send_at and its charge held, and reaches the carrier at send_at, not before", async () => {
    const before = await available();
    const sendAt = inSeconds(2);
    const res = await api("POST", "/api/v1/sms", {
      to: econetNumber(),
      from: "SHIRI",
      message: "at two seconds",
      send_at: sendAt.toISOString(),
    });
    expect(res.status).toBe(202);
    const m = res.body as Record<string, unknown>;
    expect(m).toMatchObject({ status: "enqueued", operator_response: "", send_at: sendAt.toISOString() });
    expect(await available()).toBe(before - PRICE);

    // While it waits, a client polling sees it enqueued, with its send_at.
    const got = await api("GET", `/api/v1/sms/${m.id}`);
    expect((got.body as { data: unknown }).data).toMatchObject({ status: "enqueued", send_at: m.send_at });

    await h.waitUntilSettled([String(m.id)], { timeoutMs: 15_000 });
    const [submit, ...again] = submitsOf("at two seconds");
    expect(again).toHaveLength(0);
    // Never before its time; and promptly after it (the bound is loose: the machine is shared).
    const late = (submit?.at.getTime() ?? 0) - sendAt.getTime();
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(3_000);
    expect((await h.statusOf([String(m.id)])).get(String(m.id))?.status).toBe("success");
  });

  it("a bulk send is scheduled whole: data.send_at, every item enqueued, none sent before it", async () => {
    const sendAt = inSeconds(2);
    const to = [econetNumber(), econetNumber()];
    const res = await api("POST", "/api/v1/sms/bulk", {
      to,
      from: "SHIRI",
      message: "bulk at two seconds",
      send_at: sendAt.toISOString(),
    });
    expect(res.status).toBe(202);
    const data = (
      res.body as { data: { send_at: string; charge: number; items: { id: string; status: string }[] } }
    ).data;
    expect(data.send_at).toBe(sendAt.toISOString());
    expect(data.items.map((i) => i.status)).toEqual(["enqueued", "enqueued"]);
    await h.waitUntilSettled(
      data.items.map((i) => i.id),
      { timeoutMs: 15_000 },
    );
    const submits = submitsOf("bulk at two seconds");
    expect(submits.map((s) => `+${s.destination_addr}`).sort()).toEqual([...to].sort());
    for (const s of submits) expect(s.at.getTime()).toBeGreaterThanOrEqual(sendAt.getTime());
  });

  it("a dispatch job that comes early (another process's clock, a retry) does not send it early", async () => {
    const sendAt = inSeconds(2);
    const res = await api("POST", "/api/v1/sms", {
      to: econetNumber(),
      from: "SHIRI",
      message: "early job",
      send_at: sendAt.toISOString(),
    });
    const id = (res.body as { id: string }).id;
    // Its own job is replaced by one due now: only the claim stands between it and the carrier.
    await h.pool.query("DELETE FROM pgboss.job WHERE name = 'dispatch-econet' AND data->'messageIds' ? $1", [
      id,
    ]);
    await enqueueDispatch(h.t.service.boss, h.pool, [{ id, operator: "econet" }], 50);
    await h.waitUntilSettled([id], { timeoutMs: 15_000 });
    const submits = submitsOf("early job");
    expect(submits).toHaveLength(1);
    expect(submits[0]?.at.getTime()).toBeGreaterThanOrEqual(sendAt.getTime());
  });

  it("an Idempotency-Key replay after send_at has passed answers the original 202", async () => {
    const sendAt = inSeconds(1);
    const body = { to: econetNumber(), from: "SHIRI", message: "replayed", send_at: sendAt.toISOString() };
    const headers = { ...acct.headers, "idempotency-key": `sched-${Date.now()}` };
    const first = await call(h.t.base, "POST", "/api/v1/sms", { headers, body });
    expect(first.status).toBe(202);
    await waitFor(() => Date.now() > sendAt.getTime() + 100, { timeoutMs: 5_000, what: "send_at to pass" });
    const again = await call(h.t.base, "POST", "/api/v1/sms", { headers, body });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
  });
});

describe("the dispatch queue's gauges", () => {
  it("count a job waiting for its send_at apart, and it never ages the queue", async () => {
    const sent = await api("POST", "/api/v1/sms", {
      to: econetNumber(),
      from: "SHIRI",
      message: "in an hour",
      send_at: inSeconds(3_600).toISOString(),
    });
    const id = (sent.body as { id: string }).id;
    // Accepted an hour ago, due in an hour: not late, so no "stale queue" alert.
    await h.pool.query(
      "UPDATE pgboss.job SET created_on = now() - interval '1 hour' WHERE name = 'dispatch-econet' AND data->'messageIds' ? $1",
      [id],
    );
    const metrics = createMetrics();
    const samplers = startSamplers(
      metrics,
      h.pool,
      loadConfig({ DATABASE_URL: "postgres://unused" }),
      createLogger("silent"),
    );
    const econet = async (gauge: {
      get(): Promise<{ values: { labels: { operator?: string | number }; value: number }[] }>;
    }) => (await gauge.get()).values.find((v) => v.labels.operator === "econet")?.value;
    try {
      await waitFor(async () => ((await econet(metrics.queueNotYetDue)) ?? 0) >= 1, {
        timeoutMs: 5_000,
        what: "the first sample",
      });
    } finally {
      samplers.stop();
    }
    expect(await econet(metrics.queueOldestAge)).toBeLessThan(60);
    expect((await api("DELETE", `/api/v1/sms/${id}`)).status).toBe(200);
  });
});

describe("send_at validation", () => {
  const bad = [
    {
      what: "in the past",
      value: new Date(Date.now() - 60_000).toISOString(),
      says: "must be in the future",
    },
    { what: "more than 30 days ahead", value: inSeconds(31 * 86_400).toISOString(), says: "30 days" },
    { what: "without an offset", value: "2030-01-01T10:00:00", says: "RFC 3339" },
    { what: "not a date-time", value: "tomorrow", says: "RFC 3339" },
    { what: "not a string", value: 1_900_000_000, says: "RFC 3339" },
  ];

  it.each(bad)("single send, $what: 400 legacy naming send_at, nothing written", async ({ value, says }) => {
    const before = await available();
    const res = await api("POST", "/api/v1/sms", {
      to: econetNumber(),
      from: "SHIRI",
      message: "never",
      send_at: value,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "", error: { type: "ERR_BAD_REQUEST" } });
    const errors = (res.body as { error: { validation_errors: { field: string; description: string }[] } })
      .error.validation_errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe("send_at");
    expect(errors[0]?.description).toContain(says);
    expect(await available()).toBe(before);
  });

  it.each(bad)("bulk send, $what: 400 Kit VALIDATION_ERROR naming send_at", async ({ value, says }) => {
    const res = await api("POST", "/api/v1/sms/bulk", {
      to: [econetNumber()],
      from: "SHIRI",
      message: "never",
      send_at: value,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "error", error: { code: "VALIDATION_ERROR" } });
    const errors = (res.body as { error: { validation_errors: { field: string; description: string }[] } })
      .error.validation_errors;
    expect(errors.map((e) => e.field)).toEqual(["send_at"]);
    expect(errors[0]?.description).toContain(says);
  });

  it("an offset other than Z names the same instant", async () => {
    const at = inSeconds(3_600);
    at.setMilliseconds(0);
    const plusTwo = new Date(at.getTime() + 2 * 3_600_000).toISOString().replace(".000Z", "+02:00");
    const res = await api("POST", "/api/v1/sms", {
      to: econetNumber(),
      from: "SHIRI",
      message: "offset",
      send_at: plusTwo,
    });
    expect(res.status).toBe(202);
    expect((res.body as { send_at: string }).send_at).toBe(at.toISOString());
    await api("DELETE", `/api/v1/sms/${(res.body as { id: string }).id}`);
  });
});

describe("DELETE /api/v1/sms/{id}", () => {
  it("before dispatch: the message fails CANCELLED, its hold is released once, the ledger and audit agree", async () => {
    const before = await available();
    const sent = await api("POST", "/api/v1/sms", {
      to: econetNumber(),
      from: "SHIRI",
      message: "cancel me",
      send_at: inSeconds(3_600).toISOString(),
    });
    const id = (sent.body as { id: string }).id;
    expect(await available()).toBe(before - PRICE);

    const res = await api("DELETE", `/api/v1/sms/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "success",
      message: "sms cancelled",
      data: { id, status: "failed", operator_response: "CANCELLED", delivered_at: null },
    });
    expect(await available()).toBe(before);
    expect(await ledgerOf([id])).toEqual([
      { kind: "hold", amount: PRICE },
      { kind: "release", amount: PRICE },
    ]);

    // Repeated: the same answer, nothing released twice.
    const again = await api("DELETE", `/api/v1/sms/${id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect(await available()).toBe(before);
    const got = await api("GET", `/api/v1/sms/${id}`);
    expect((got.body as { data: unknown }).data).toEqual((res.body as { data: unknown }).data);

    expect(await balanceFromLedger(h.pool, acct.id)).toEqual({
      available: before,
      held: (await balanceNow(h.pool, acct.id))?.held,
    });
    const report = await audit(h.pool, { stuckMinutes: 60, receiptHours: 24 });
    expect(report.balance_mismatches.count).toBe(0);
    expect(report.holds_without_live_message.count).toBe(0);
    expect(report.stuck_messages.count).toBe(0);
  });

  it("a cancelled message of a due job is never submitted while the others of the job are", async () => {
    const sendAt = inSeconds(2);
    const to = [econetNumber(), econetNumber()];
    const res = await api("POST", "/api/v1/sms/bulk", {
      to,
      from: "SHIRI",
      message: "half cancelled",
      send_at: sendAt.toISOString(),
    });
    const [kept, cancelled] = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    expect((await api("DELETE", `/api/v1/sms/${cancelled}`)).status).toBe(200);
    // Both ids travel in one dispatch job: once the kept one is sent, the claim has refused the other.
    await h.waitUntilSettled([String(kept)], { timeoutMs: 15_000 });
    expect(submitsOf("half cancelled").map((s) => `+${s.destination_addr}`)).toEqual([to[0]]);
    const states = await h.statusOf([String(kept), String(cancelled)]);
    expect(states.get(String(kept))?.status).toBe("success");
    expect(states.get(String(cancelled))).toMatchObject({ status: "failed", operator_response: "CANCELLED" });
  });

  it("after dispatch: 409 Kit CONFLICT and nothing changes", async () => {
    const sent = await api("POST", "/api/v1/sms", {
      to: econetNumber(),
      from: "SHIRI",
      message: "sent at once",
    });
    const id = (sent.body as { id: string }).id;
    // Its receipt too: one arriving between the two reads below would change the message.
    await h.waitUntilSettled([id], { delivered: true });
    const before = await available();
    const message = (await api("GET", `/api/v1/sms/${id}`)).body;
    const res = await api("DELETE", `/api/v1/sms/${id}`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: "error", error: { code: "CONFLICT" } });
    expect((await api("GET", `/api/v1/sms/${id}`)).body).toEqual(message);
    expect(await available()).toBe(before);
    // Its hold was captured on acceptance and stays so (a capture is the message's billing; the
    // ledger's capture row is the settle's, one an account).
    expect((await ledgerOf([id])).map((e) => e.kind)).toEqual(["hold"]);
    const { rows } = await h.pool.query<{ billing: string }>("SELECT billing FROM messages WHERE id = $1", [
      id,
    ]);
    expect(rows[0]?.billing).toBe("captured");
  });

  it("another account's message is not found (404 Kit) and stays as it was; a bad id is 400 Kit", async () => {
    const other = await h.t.account();
    const sent = await api("POST", "/api/v1/sms", {
      to: econetNumber(),
      from: "SHIRI",
      message: "not yours",
      send_at: inSeconds(3_600).toISOString(),
    });
    const id = (sent.body as { id: string }).id;
    const res = await api("DELETE", `/api/v1/sms/${id}`, undefined, other);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ status: "error", error: { code: "NOT_FOUND" } });
    expect((await h.statusOf([id])).get(id)?.status).toBe("enqueued");

    const invalid = await api("DELETE", "/api/v1/sms/not-a-uuid");
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({
      status: "error",
      message: "invalid sms id",
      error: { code: "BAD_REQUEST" },
    });
    const anonymous = await call(h.t.base, "DELETE", `/api/v1/sms/${id}`);
    expect(anonymous.status).toBe(401);
    expect((await api("DELETE", `/api/v1/sms/${id}`)).status).toBe(200);
  });
});

describe("DELETE /api/v1/sms/bulk/{bulk_id}", () => {
  async function scheduledBulk(to: string[]) {
    const res = await api("POST", "/api/v1/sms/bulk", {
      to,
      from: "SHIRI",
      message: "bulk to cancel",
      send_at: inSeconds(3_600).toISOString(),
    });
    expect(res.status).toBe(202);
    const ids = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    const { rows } = await h.pool.query<{ bulk_id: string }>("SELECT bulk_id FROM messages WHERE id = $1", [
      ids[0],
    ]);
    return { ids, bulkId: String(rows[0]?.bulk_id) };
  }

  it("cancels every waiting message and releases their holds in one go; the unroutable stays billed", async () => {
    const before = await available();
    const { ids, bulkId } = await scheduledBulk([
      econetNumber(),
      econetNumber(),
      econetNumber(),
      "+4412345678",
    ]);
    const unroutableCharge = 450; // the highest per-segment price
    expect(await available()).toBe(before - 3 * PRICE - unroutableCharge);

    const res = await api("DELETE", `/api/v1/sms/bulk/${bulkId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "success",
      message: "bulk sms cancelled",
      data: { bulk_id: bulkId, total: 4, cancelled: 3, not_cancelled: 1 },
    });
    expect(await available()).toBe(before - unroutableCharge);
    const ledger = await ledgerOf(ids);
    expect(ledger.filter((e) => e.kind === "release")).toHaveLength(3);
    expect(ledger.filter((e) => e.kind === "hold")).toEqual([
      { kind: "hold", amount: 3 * PRICE + unroutableCharge },
    ]);
    const states = await h.statusOf(ids);
    expect(ids.slice(0, 3).map((id) => states.get(id)?.operator_response)).toEqual([
      "CANCELLED",
      "CANCELLED",
      "CANCELLED",
    ]);
    expect(states.get(String(ids[3]))?.operator_response).toBe("UNROUTABLE");

    // Repeated: the same counts, no second release.
    const again = await api("DELETE", `/api/v1/sms/bulk/${bulkId}`);
    expect(again.body).toEqual(res.body);
    expect(await available()).toBe(before - unroutableCharge);
  });

  it("a bulk already dispatched: 409 Kit CONFLICT and nothing changes", async () => {
    const sent = await api("POST", "/api/v1/sms/bulk", {
      to: [econetNumber(), econetNumber()],
      from: "SHIRI",
      message: "bulk sent at once",
    });
    const ids = (sent.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    await h.waitUntilSettled(ids);
    const { rows } = await h.pool.query<{ bulk_id: string }>("SELECT bulk_id FROM messages WHERE id = $1", [
      ids[0],
    ]);
    const before = await available();
    const res = await api("DELETE", `/api/v1/sms/bulk/${rows[0]?.bulk_id}`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: "error", error: { code: "CONFLICT" } });
    expect(await available()).toBe(before);
    expect([...(await h.statusOf(ids)).values()].map((s) => s.status)).toEqual(["success", "success"]);
  });

  it("another account's bulk is not found (404 Kit); a bad id is 400 Kit", async () => {
    const other = await h.t.account();
    const { ids, bulkId } = await scheduledBulk([econetNumber()]);
    const res = await api("DELETE", `/api/v1/sms/bulk/${bulkId}`, undefined, other);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ status: "error", error: { code: "NOT_FOUND" } });
    expect((await h.statusOf(ids)).get(String(ids[0]))?.status).toBe("enqueued");
    const invalid = await api("DELETE", "/api/v1/sms/bulk/nope");
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ status: "error", error: { code: "BAD_REQUEST" } });
    expect((await api("DELETE", `/api/v1/sms/bulk/${bulkId}`)).status).toBe(200);
  });
});
