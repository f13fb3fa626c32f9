import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SmppSettings } from "../../carriers/index.ts";
import { loadConfig } from "../../src/config.ts";
import { withTransaction } from "../../src/db/pool.ts";
import { balanceFromLedger } from "../../src/ledger/ledger.ts";
import {
  CANCELLED,
  cancelMessages,
  claimMessages,
  expireMessages,
  failOptedOutMessages,
  giveUpLease,
  markAccepted,
  markRefused,
  OPTED_OUT_BEFORE_DISPATCH,
  refreshDelivery,
  TRANSITIONS,
} from "../../src/lifecycle/index.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { createLogger } from "../../src/logger.ts";
import { applyReceipts } from "../../src/receipts/apply-receipts.ts";
import { IdTally } from "../../src/receipts/id-tally.ts";
import { ReceiptStage } from "../../src/receipts/receipt-stage.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * Every transition of the message lifecycle (src/lifecycle/index.ts), allowed from the states its
 * guard names and refused from the others, with the money it moves and the event it records.
 * Messages come from the real send path (held charge, pg-boss job); the API role runs no worker,
 * so nothing else moves them.
 */
let t: TestService;
let acct: TestAccount;
beforeAll(async () => {
  t = await startTestService({ PORT: "0" }, "api");
  acct = await t.account({ balance: 10_000_000 });
  // Callbacks for every event, so each transition's event is recorded.
  await call(t.base, "PUT", "/api/v1/webhook", {
    headers: acct.headers,
    body: { url: "https://hooks.example.com/in" },
  });
});
afterAll(async () => {
  await t?.stop();
});

const PRICE = 450;
const lease = () => ({ owner: randomUUID(), lockSeconds: 60, validityHours: 24 });

async function send(sendAt?: Date, to?: string, message = "life"): Promise<string> {
  const res = await call(t.base, "POST", "/api/v1/sms", {
    headers: acct.headers,
    body: {
      to: to ?? `+26377${String(1_000_000 + Math.floor(Math.random() * 8_999_999))}`,
      from: "SHIRI",
      message,
      ...(sendAt ? { send_at: sendAt.toISOString() } : {}),
    },
  });
  expect(res.status).toBe(202);
  return (res.body as { id: string }).id;
}

async function row(id: string) {
  const { rows } = await t.service.pool.query<{
    status: string;
    billing: string;
    operator_response: string;
    delivered: boolean;
    locked_by: string | null;
  }>(
    `SELECT status, billing, operator_response, delivered_at IS NOT NULL AS delivered, locked_by::text
       FROM messages WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** What the account's ledger rows say it holds: a capture lowers it, once per message. */
async function heldByLedger(): Promise<number> {
  return (await balanceFromLedger(t.service.pool, acct.id)).held;
}

/** The message's own ledger rows beside its hold: a release (captures are one row a batch). */
async function ledgerKinds(id: string): Promise<string[]> {
  const { rows } = await t.service.pool.query<{ kind: string }>(
    "SELECT kind FROM ledger_entries WHERE message_id = $1 AND kind <> 'hold' ORDER BY id",
    [id],
  );
  return rows.map((r) => r.kind);
}

async function events(id: string): Promise<string[]> {
  const { rows } = await t.service.pool.query<{ type: string }>(
    "SELECT type FROM webhook_events WHERE message_id = $1 AND type <> 'message.enqueued' ORDER BY created_at, type",
    [id],
  );
  return rows.map((r) => r.type);
}

const tx = <T>(fn: Parameters<typeof withTransaction<T>>[1]) => withTransaction(t.service.pool, fn);

/** A claim's answer but for when it ran, which no two claims share. */
async function claimOf(ids: string[]) {
  const { claimedAt: _at, ...answer } = await tx((c) => claimMessages(c, ids, lease()));
  return answer;
}

async function claimed(id: string) {
  const l = lease();
  const { claimed: got } = await tx((c) => claimMessages(c, [id], l));
  expect(got.map((m) => m.id)).toEqual([id]);
  return l;
}

describe("the message lifecycle", () => {
  it("documents eight transitions, each with its money and its event", () => {
    expect(TRANSITIONS.map((x) => x.name)).toEqual([
      "claim",
      "expire",
      "cancel",
      "opt out",
      "accept",
      "refuse",
      "give up the lease",
      "deliver",
    ]);
  });

  it("claim: enqueued → processing, leased to one run; a second run is refused while the lease lives", async () => {
    const id = await send();
    const first = await claimed(id);
    expect(await row(id)).toMatchObject({ status: "processing", billing: "held", locked_by: first.owner });
    expect(await claimOf([id])).toEqual({ claimed: [], busy: [id], notDue: [] });
    expect(await ledgerKinds(id)).toEqual([]);
  });

  it("claim: in one batch, the free messages are taken and the held one is named busy", async () => {
    const held = await send();
    await claimed(held);
    const free = await send();
    const batch = await tx((c) => claimMessages(c, [free, held], lease()));
    expect(batch.claimed.map((m) => m.id)).toEqual([free]);
    expect(batch).toMatchObject({ busy: [held], notDue: [] });
  });

  it("claim: a scheduled message is refused before its send_at and named with it; taken once due", async () => {
    const sendAt = new Date(Date.now() + 3_600_000);
    const id = await send(sendAt);
    expect(await claimOf([id])).toEqual({ claimed: [], busy: [], notDue: [{ id, sendAt }] });
    expect(await row(id)).toMatchObject({ status: "enqueued", billing: "held", locked_by: null });
    await t.service.pool.query("UPDATE messages SET send_at = now() - interval '1 second' WHERE id = $1", [
      id,
    ]);
    await claimed(id);
  });

  it("cancel: enqueued → failed CANCELLED, the hold released once, message.failed recorded", async () => {
    const id = await send(new Date(Date.now() + 3_600_000));
    const before = await balanceNow(t.service.pool, acct.id);
    expect(await tx((c) => cancelMessages(c, acct.id, { messageId: id }))).toEqual([
      { id, operator: "econet" },
    ]);
    expect(await row(id)).toMatchObject({
      status: "failed",
      billing: "released",
      operator_response: CANCELLED,
    });
    expect((await balanceNow(t.service.pool, acct.id))?.available).toBe((before?.available ?? 0) + PRICE);
    // Refused the second time, and by the claim: nothing more is released, nothing is sent.
    expect(await tx((c) => cancelMessages(c, acct.id, { messageId: id }))).toEqual([]);
    expect(await claimOf([id])).toEqual({ claimed: [], busy: [], notDue: [] });
    expect(await ledgerKinds(id)).toEqual(["release"]);
    expect(await events(id)).toEqual(["message.failed"]);
  });

  it("cancel is refused for a message claimed, and for another account's", async () => {
    const id = await send();
    const other = await t.account();
    expect(await tx((c) => cancelMessages(c, other.id, { messageId: id }))).toEqual([]);
    expect(await row(id)).toMatchObject({ status: "enqueued", billing: "held" });
    await claimed(id);
    expect(await tx((c) => cancelMessages(c, acct.id, { messageId: id }))).toEqual([]);
    expect(await row(id)).toMatchObject({ status: "processing", billing: "held" });
    expect(await ledgerKinds(id)).toEqual([]);
  });

  it("opt out: enqueued → failed OPTED_OUT, whatever form `to` was sent in; a claimed one is left", async () => {
    // (A national 0… number is unroutable: failed at acceptance, never waiting.)
    const [scheduled, waiting, claimedOne] = [
      await send(new Date(Date.now() + 3_600_000), "+263771555001"),
      await send(undefined, "263771555001"),
      await send(undefined, " 263771555001 "),
    ];
    await claimed(claimedOne);
    const before = await balanceNow(t.service.pool, acct.id);
    const failed = await tx((c) => failOptedOutMessages(c, acct.id, ["263771555001"]));
    expect(failed.map((m) => m.id).sort()).toEqual([scheduled, waiting].sort());
    for (const id of [scheduled, waiting]) {
      expect(await row(id)).toMatchObject({
        status: "failed",
        billing: "released",
        operator_response: OPTED_OUT_BEFORE_DISPATCH,
      });
      expect(await ledgerKinds(id)).toEqual(["release"]);
      expect(await events(id)).toEqual(["message.failed"]);
    }
    expect((await balanceNow(t.service.pool, acct.id))?.available).toBe((before?.available ?? 0) + 2 * PRICE);
    expect(await row(claimedOne)).toMatchObject({ status: "processing", billing: "held" });
    // Another account's list is not this one's.
    const other = await t.account();
    expect(await tx((c) => failOptedOutMessages(c, other.id, ["263771555001"]))).toEqual([]);
  });

  it("accept: processing → success, the hold captured once, message.success recorded", async () => {
    const id = await send();
    const { owner } = await claimed(id);
    const held = await heldByLedger();
    expect(await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], owner))).toEqual(
      [{ id, delivered: false }],
    );
    expect(await row(id)).toMatchObject({ status: "success", billing: "captured", delivered: false });
    // Refused the second time: the message is no longer processing, nothing more is captured.
    expect(await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], owner))).toEqual(
      [],
    );
    expect(await heldByLedger()).toBe(held - PRICE);
    expect(await ledgerKinds(id)).toEqual([]);
    expect(await events(id)).toEqual(["message.success"]);
  });

  it("accept with the receipts in hand: success and delivered in one move", async () => {
    const id = await send();
    const { owner } = await claimed(id);
    await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: true }], owner));
    expect(await row(id)).toMatchObject({ status: "success", operator_response: "DELIVRD", delivered: true });
    expect((await events(id)).sort()).toEqual(["message.delivered", "message.success"]);
  });

  it("accept is refused for a message not claimed (still enqueued)", async () => {
    const id = await send();
    expect(
      await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], randomUUID())),
    ).toEqual([]);
    expect(await row(id)).toMatchObject({ status: "enqueued", billing: "held" });
  });

  it("accept and refuse are refused for a run whose lease ran out and was taken by another run", async () => {
    const id = await send();
    const first = await claimed(id);
    await t.service.pool.query(
      "UPDATE messages SET locked_until = now() - interval '1 second' WHERE id = $1",
      [id],
    );
    const second = await claimed(id);
    expect(
      await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], first.owner)),
    ).toEqual([]);
    const refused = { id, response: "ESME_RINVDSTADR", error: "carrier refused" };
    expect(await tx((c) => markRefused(c, [refused], first.owner))).toEqual([]);
    expect(await row(id)).toMatchObject({ status: "processing", billing: "held", locked_by: second.owner });
    expect(await ledgerKinds(id)).toEqual([]);
    expect(await events(id)).toEqual([]);
    // The run that holds it settles it.
    const held = await heldByLedger();
    expect(
      await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], second.owner)),
    ).toEqual([{ id, delivered: false }]);
    expect(await heldByLedger()).toBe(held - PRICE);
  });

  it("refuse: processing → failed, the hold released once, message.failed recorded", async () => {
    const id = await send();
    const { owner } = await claimed(id);
    const before = await balanceNow(t.service.pool, acct.id);
    const refused = { id, response: "ESME_RINVDSTADR", error: "carrier refused" };
    expect(await tx((c) => markRefused(c, [refused], owner))).toEqual([id]);
    expect(await tx((c) => markRefused(c, [refused], owner))).toEqual([]);
    expect(await row(id)).toMatchObject({
      status: "failed",
      billing: "released",
      operator_response: "ESME_RINVDSTADR",
    });
    expect(await ledgerKinds(id)).toEqual(["release"]);
    expect((await balanceNow(t.service.pool, acct.id))?.available).toBe((before?.available ?? 0) + PRICE);
    expect(await events(id)).toEqual(["message.failed"]);
  });

  it("refuse is refused for a message not claimed (still enqueued)", async () => {
    const id = await send();
    const refused = { id, response: "ESME_RINVDSTADR", error: "carrier refused" };
    expect(await tx((c) => markRefused(c, [refused], randomUUID()))).toEqual([]);
    expect(await row(id)).toMatchObject({ status: "enqueued", billing: "held" });
    expect(await ledgerKinds(id)).toEqual([]);
    expect(await events(id)).toEqual([]);
  });

  it("the database refuses to move a billing that has moved: captured or released once", async () => {
    const captured = await send();
    const capturing = await claimed(captured);
    await tx((c) =>
      markAccepted(c, [{ id: captured, response: "ESME_ROK", delivered: false }], capturing.owner),
    );
    const released = await send();
    const releasing = await claimed(released);
    const refused = { id: released, response: "ESME_RINVDSTADR", error: "carrier refused" };
    await tx((c) => markRefused(c, [refused], releasing.owner));
    const move = (id: string, billing: string) =>
      t.service.pool.query("UPDATE messages SET billing = $2 WHERE id = $1", [id, billing]);
    for (const [id, billing] of [
      [captured, "released"],
      [captured, "held"],
      [released, "captured"],
      [released, "held"],
    ] as const)
      await expect(move(id, billing), billing).rejects.toMatchObject({ code: "23514" });
    expect(await row(captured)).toMatchObject({ billing: "captured" });
    expect(await row(released)).toMatchObject({ billing: "released" });
    // An update that names the billing without moving it is no move.
    await move(captured, "captured");
  });

  it("claim is refused for a message already final (success)", async () => {
    const id = await send();
    const { owner } = await claimed(id);
    await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], owner));
    const held = await heldByLedger();
    expect(await claimOf([id])).toEqual({ claimed: [], busy: [], notDue: [] });
    expect(await row(id)).toMatchObject({ status: "success", billing: "captured", locked_by: null });
    expect(await heldByLedger()).toBe(held);
  });

  it("give up the lease: only its owner can, and the message waits for another try", async () => {
    const id = await send();
    const held = await claimed(id);
    expect(await tx((c) => giveUpLease(c, [{ id, error: "throttled" }], randomUUID()))).toEqual([]);
    expect(await row(id)).toMatchObject({ locked_by: held.owner });
    const given = await tx((c) => giveUpLease(c, [{ id, error: "throttled" }], held.owner));
    expect(given.map((g) => g.id)).toEqual([id]);
    expect(await row(id)).toMatchObject({ status: "processing", billing: "held", locked_by: null });
    expect(await ledgerKinds(id)).toEqual([]);
    // Free again: another run may claim it.
    await claimed(id);
  });

  it("expire: a waiting message past its validity fails and its hold is released; a final one is left alone", async () => {
    const waiting = await send();
    const done = await send();
    const { owner } = await claimed(done);
    await tx((c) => markAccepted(c, [{ id: done, response: "ESME_ROK", delivered: false }], owner));
    await t.service.pool.query(
      "UPDATE messages SET received_at = now() - interval '2 days' WHERE id = ANY($1)",
      [[waiting, done]],
    );
    const expired = await tx((c) =>
      expireMessages(c, { validityHours: 24, limit: 10, messageIds: [waiting, done] }),
    );
    expect(expired.map((e) => e.id)).toEqual([waiting]);
    expect(await row(waiting)).toMatchObject({
      status: "failed",
      billing: "released",
      operator_response: "VALIDITY_EXPIRED",
    });
    expect(await ledgerKinds(waiting)).toEqual(["release"]);
    expect(await events(waiting)).toEqual(["message.failed"]);
    expect(await row(done)).toMatchObject({ status: "success", billing: "captured" });
  });

  it("expire: a processing message past its validity fails once its lease ran out, never while it lives", async () => {
    const live = await send();
    const lapsed = await send();
    await claimed(live);
    await claimed(lapsed);
    await t.service.pool.query(
      `UPDATE messages SET received_at = now() - interval '2 days',
              locked_until = CASE WHEN id = $1 THEN now() - interval '1 second' ELSE locked_until END
        WHERE id = ANY($2)`,
      [lapsed, [live, lapsed]],
    );
    const expired = await tx((c) =>
      expireMessages(c, { validityHours: 24, limit: 10, messageIds: [live, lapsed] }),
    );
    expect(expired.map((e) => e.id)).toEqual([lapsed]);
    expect(await row(lapsed)).toMatchObject({
      status: "failed",
      billing: "released",
      operator_response: "VALIDITY_EXPIRED",
    });
    expect(await ledgerKinds(lapsed)).toEqual(["release"]);
    expect(await events(lapsed)).toEqual(["message.failed"]);
    // The live lease's run may be submitting it right now: left alone, hold kept.
    expect(await row(live)).toMatchObject({ status: "processing", billing: "held" });
    expect(await ledgerKinds(live)).toEqual([]);
  });

  it("expire: a scheduled message's validity counts from its send_at, not from its acceptance", async () => {
    const early = await send(new Date(Date.now() + 60_000));
    const late = await send(new Date(Date.now() + 60_000));
    // Both accepted two days ago; one was due an hour ago (within its validity), one 25 hours ago.
    await t.service.pool.query(
      `UPDATE messages SET received_at = now() - interval '2 days', created_at = now() - interval '2 days',
              send_at = CASE WHEN id = $1 THEN now() - interval '1 hour' ELSE now() - interval '25 hours' END
        WHERE id = ANY($2)`,
      [early, [early, late]],
    );
    const expired = await tx((c) =>
      expireMessages(c, { validityHours: 24, limit: 10, messageIds: [early, late] }),
    );
    expect(expired.map((e) => e.id)).toEqual([late]);
    expect(await row(early)).toMatchObject({ status: "enqueued", billing: "held" });
  });

  /** A two-segment message, claimed, of which the carrier took the given parts. */
  async function claimedWithParts(parts: readonly number[]) {
    const id = await send(undefined, undefined, "x".repeat(200));
    const held = await claimed(id);
    for (const part of parts)
      await t.service.pool.query(
        "INSERT INTO message_parts (message_id, part_no, link, smsc_id) VALUES ($1, $2, 'econet', $3)",
        [id, part, randomUUID()],
      );
    return { id, owner: held.owner };
  }

  it("expire: a message the carrier took a segment of is billed; one it took whole waits for its claim", async () => {
    const partly = await claimedWithParts([1]);
    const whole = await claimedWithParts([1, 2]);
    for (const { id, owner } of [partly, whole])
      await tx((c) => giveUpLease(c, [{ id, error: "throttled" }], owner));
    await t.service.pool.query(
      "UPDATE messages SET received_at = now() - interval '2 days' WHERE id = ANY($1)",
      [[partly.id, whole.id]],
    );
    const before = await balanceNow(t.service.pool, acct.id);
    const expired = await tx((c) =>
      expireMessages(c, { validityHours: 24, limit: 10, messageIds: [partly.id, whole.id] }),
    );
    expect(expired.map((e) => e.id)).toEqual([partly.id]);
    // The handset has its first segment and the carrier bills it: charged, not given back.
    expect(await row(partly.id)).toMatchObject({
      status: "failed",
      billing: "captured",
      operator_response: "VALIDITY_EXPIRED",
    });
    expect(await ledgerKinds(partly.id)).toEqual([]);
    expect((await balanceNow(t.service.pool, acct.id))?.available).toBe(before?.available);
    expect(await events(partly.id)).toEqual(["message.failed"]);
    // Every segment is at the carrier: its next claim sends nothing and settles it a success.
    expect(await row(whole.id)).toMatchObject({ status: "processing", billing: "held" });
    const again = await tx((c) => claimMessages(c, [whole.id], lease()));
    expect(again.claimed.map((m) => [m.id, m.accepted_parts])).toEqual([[whole.id, [1, 2]]]);
  });

  it("refuse and opt out: a message the carrier took a segment of is billed, not released", async () => {
    const refusedOne = await claimedWithParts([1]);
    const refused = { id: refusedOne.id, response: "ESME_RINVDSTADR", error: "carrier refused part 2" };
    expect(await tx((c) => markRefused(c, [refused], refusedOne.owner))).toEqual([refusedOne.id]);
    expect(await row(refusedOne.id)).toMatchObject({ status: "failed", billing: "captured" });
    expect(await ledgerKinds(refusedOne.id)).toEqual([]);

    const number = "263771555009";
    const optedOut = await send(undefined, `+${number}`, "x".repeat(200));
    const { owner } = await claimed(optedOut);
    await t.service.pool.query(
      "INSERT INTO message_parts (message_id, part_no, link, smsc_id) VALUES ($1, 1, 'econet', $2)",
      [optedOut, randomUUID()],
    );
    await tx((c) => giveUpLease(c, [{ id: optedOut, error: "throttled" }], owner));
    const failed = await tx((c) => failOptedOutMessages(c, acct.id, [number]));
    expect(failed.map((m) => m.id)).toEqual([optedOut]);
    expect(await row(optedOut)).toMatchObject({ status: "failed", billing: "captured" });
    expect(await ledgerKinds(optedOut)).toEqual([]);
  });

  it("give up the lease with a late answer due: neither expired nor cancelled until it may come", async () => {
    const id = await send();
    const { owner } = await claimed(id);
    await tx((c) =>
      giveUpLease(c, [{ id, error: "no response: timeout", unanswered: true, notBeforeSeconds: 30 }], owner),
    );
    await t.service.pool.query("UPDATE messages SET received_at = now() - interval '2 days' WHERE id = $1", [
      id,
    ]);
    expect(await tx((c) => expireMessages(c, { validityHours: 24, limit: 10, messageIds: [id] }))).toEqual(
      [],
    );
    expect(await tx((c) => cancelMessages(c, acct.id, { messageId: id }))).toEqual([]);
    expect(await claimOf([id])).toEqual({ claimed: [], busy: [id], notDue: [] });
    expect(await row(id)).toMatchObject({ status: "processing", billing: "held", locked_by: null });
    // The window over with no answer heard: it waits like any other, and expires.
    await t.service.pool.query(
      "UPDATE messages SET locked_until = now() - interval '1 second' WHERE id = $1",
      [id],
    );
    const expired = await tx((c) => expireMessages(c, { validityHours: 24, limit: 10, messageIds: [id] }));
    expect(expired.map((e) => e.id)).toEqual([id]);
    expect(await row(id)).toMatchObject({ status: "failed", billing: "released" });
  });

  it("deliver: success → delivered_at when every segment says DELIVRD; refused before success", async () => {
    const id = await send();
    const { owner } = await claimed(id);
    await t.service.pool.query(
      "INSERT INTO message_parts (message_id, part_no, link, smsc_id, receipt_state, receipt_at) VALUES ($1, 1, 'econet', $2, 'DELIVRD', now())",
      [id, `smsc-${id}`],
    );
    // Still processing: no delivery before the acceptance is recorded.
    expect(await tx((c) => refreshDelivery(c, [id]))).toEqual([]);
    expect(await row(id)).toMatchObject({ status: "processing", delivered: false });
    await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], owner));
    expect(await tx((c) => refreshDelivery(c, [id]))).toHaveLength(1);
    expect(await row(id)).toMatchObject({ status: "success", operator_response: "DELIVRD", delivered: true });
    expect(await tx((c) => refreshDelivery(c, [id]))).toEqual([]);
    expect((await events(id)).sort()).toEqual(["message.delivered", "message.success"]);
  });

  it("deliver: a final state other than DELIVRD is reported in operator_response, status kept", async () => {
    const id = await send();
    const { owner } = await claimed(id);
    await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], owner));
    await t.service.pool.query(
      "INSERT INTO message_parts (message_id, part_no, link, smsc_id, receipt_state, receipt_err, receipt_at) VALUES ($1, 1, 'econet', $2, 'UNDELIV', '001', now())",
      [id, `smsc-${id}`],
    );
    await tx((c) => refreshDelivery(c, [id]));
    expect(await row(id)).toMatchObject({
      status: "success",
      operator_response: "UNDELIV err:001",
      delivered: false,
    });
    expect((await events(id)).sort()).toEqual(["message.success", "message.undelivered"]);
  });

  it("deliver: two parts' receipts that came together report the lower part, however the rows are read", async () => {
    const id = await send();
    const { owner } = await claimed(id);
    await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], owner));
    // Part 2 written first, so a scan in physical order meets it before part 1; both receipts
    // applied in one transaction, so their receipt_at is the same.
    await t.service.pool.query(
      `INSERT INTO message_parts (message_id, part_no, link, smsc_id, receipt_state, receipt_err, receipt_at)
       VALUES ($1, 2, 'econet', $2, 'UNDELIV', '001', '2026-03-01T09:00:00Z'),
              ($1, 1, 'econet', $3, 'EXPIRED', '027', '2026-03-01T09:00:00Z')`,
      [id, `tie2-${id}`, `tie1-${id}`],
    );
    // Read in physical order (a sequential scan), then by the index: the pick must not care.
    await tx(async (c) => {
      await c.query("SET LOCAL enable_indexscan = off");
      await c.query("SET LOCAL enable_bitmapscan = off");
      return refreshDelivery(c, [id]);
    });
    expect(await row(id)).toMatchObject({ operator_response: "EXPIRED err:027", delivered: false });
    await tx(async (c) => {
      await c.query("SET LOCAL enable_seqscan = off");
      await c.query("SET LOCAL enable_bitmapscan = off");
      return refreshDelivery(c, [id]);
    });
    // A duplicate of part 2's receipt, applied and refreshed as the receipt stage does.
    await tx((c) => applyReceipts(c, "econet", [{ smscId: `tie2-${id}`, state: "UNDELIV", err: "001" }]));
    await tx((c) => refreshDelivery(c, [id]));
    expect(await row(id)).toMatchObject({ operator_response: "EXPIRED err:027", delivered: false });
    expect((await events(id)).sort()).toEqual(["message.success", "message.undelivered"]);
  });

  it("a receipt applied before the acceptance is recorded is reported, and a second look delivers", async () => {
    const id = await send();
    const { owner } = await claimed(id);
    await t.service.pool.query(
      "INSERT INTO message_parts (message_id, part_no, link, smsc_id) VALUES ($1, 1, 'econet', $2)",
      [id, `race-${id}`],
    );
    // The receipt stage applies the receipt while the batch's settle is still open.
    const applied = await tx((c) => applyReceipts(c, "econet", [{ smscId: `race-${id}`, state: "DELIVRD" }]));
    expect(applied.notYetAccepted).toEqual([id]);
    // The settle did not see the receipt: success without delivered_at.
    await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], owner));
    expect(await row(id)).toMatchObject({ status: "success", delivered: false });
    // The stage's second look (receipt-stage.ts) delivers it.
    await tx((c) => refreshDelivery(c, applied.notYetAccepted));
    expect(await row(id)).toMatchObject({ status: "success", delivered: true });
  });

  it("the receipt stage looks again once a settle has committed, at the messages it did not deliver", async () => {
    const stage = new ReceiptStage({
      transact: tx,
      link: "econet",
      settings: loadConfig({}).links.econet as SmppSettings,
      validityHours: 24,
      logger: createLogger("silent"),
      metrics: t.service.metrics,
      tally: new IdTally(t.service.metrics),
    });
    // Both receipts came by another process's bind while the batch's settle was open, and the
    // settle, slower than that process's own second look, saw neither.
    const [missed, trusted] = [await send(), await send()];
    for (const id of [missed, trusted]) {
      const { owner } = await claimed(id);
      await t.service.pool.query(
        "INSERT INTO message_parts (message_id, part_no, link, smsc_id) VALUES ($1, 1, 'econet', $2)",
        [id, `open-${id}`],
      );
      await tx((c) => applyReceipts(c, "econet", [{ smscId: `open-${id}`, state: "DELIVRD" }]));
      await tx((c) => markAccepted(c, [{ id, response: "ESME_ROK", delivered: false }], owner));
    }
    // The settle says it delivered `trusted`: a delivery is final, so the stage does not look
    // at it again (here it was not, which shows the look skipped).
    await stage.segmentsRecorded(
      [missed, trusted].map((id) => ({ messageId: id, smscId: `open-${id}` })),
      new Set([trusted]),
    );
    expect(await row(missed)).toMatchObject({
      status: "success",
      operator_response: "DELIVRD",
      delivered: true,
    });
    expect(await row(trusted)).toMatchObject({ status: "success", delivered: false });
  });

  it("the ledger still balances after every move above", async () => {
    await expectLedgerBalanced(t.service.pool, acct.id);
  });
});
