import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendMobileOriginated } from "../../carriers/simulator/mobile-originated.ts";
import { audit } from "../../src/audit/audit.ts";
import { addInboundNumber } from "../../src/inbound/inbound-numbers.ts";
import { setKeywordSettings } from "../../src/inbound/keywords.ts";
import { balanceFromLedger } from "../../src/ledger/ledger.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { verifySignature } from "../../src/webhooks/signing.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call, type TestAccount } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * Opt-outs end to end over loopback SMPP: a handset's STOP puts its number on the account's list,
 * a send to it then reaches no carrier and costs nothing, START takes it off, keyword replies go
 * out billed from the number written to, the API manages the list, and every change is a signed
 * callback. Another account's list and sends are its own.
 */
let h: DispatchHarness;
let other: TestAccount;
let rx: Receiver;
let secret: string;
const SHORT_CODE = "33001";
const LONG_NUMBER = "263772000000";

beforeAll(async () => {
  h = await startDispatchHarness();
  other = await h.t.account();
  await addInboundNumber(h.pool, h.acct.id, SHORT_CODE);
  await addInboundNumber(h.pool, h.acct.id, LONG_NUMBER);
  await setKeywordSettings(
    h.pool,
    h.acct.id,
    {
      replies: { opt_out: "You will get no more messages. Reply START to undo.", help: "Call 0242 000 000" },
    },
    { maxSegments: 10 },
  );
  rx = await startReceiver();
  const put = await call(h.t.base, "PUT", "/api/v1/webhook", {
    headers: h.acct.headers,
    body: { url: rx.url, events: ["contact.opted_out", "contact.opted_in", "message.failed"] },
  });
  secret = (put.body as { data: { signing_secret: string } }).data.signing_secret;
  await waitFor(() => h.sims.get("econet").boundSessions === 1, {
    timeoutMs: 20_000,
    what: "the econet bind",
  });
}, 60_000);

afterAll(async () => {
  await rx?.stop();
  await h?.stop();
});

async function handsetSends(from: string, text: string, to = SHORT_CODE): Promise<void> {
  const result = await sendMobileOriginated(h.sims.get("econet").boundSessionList(), { from, to, text });
  expect(result.sent.map((s) => s.command_status)).toEqual([0]);
}

async function listed(account: TestAccount, number: string): Promise<boolean> {
  const res = await call(h.t.base, "GET", `/api/v1/opt-outs?number=${number}`, { headers: account.headers });
  return (res.body as { data: { items: unknown[] } }).data.items.length === 1;
}

/** shiri_keyword_replies_total for one outcome (0 before the first). */
async function keywordReplies(outcome: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${h.t.service.metricsPort}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`shiri_keyword_replies_total{outcome="${outcome}"}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

/** What the SMSC accepted for a destination. */
const atSmsc = (to: string) => h.sims.get("econet").accepted.filter((a) => a.destination_addr === to);

/**
 * The balance agrees with the ledger. Read by two statements, so a capture committed between
 * them (a reply being dispatched) can show for a moment: the two are read until they agree.
 */
async function expectLedgerBalanced(account: TestAccount): Promise<void> {
  const read = async () => {
    const [balance, ledger] = await Promise.all([
      balanceNow(h.pool, account.id),
      balanceFromLedger(h.pool, account.id),
    ]);
    return { balance: { available: balance?.available, held: balance?.held }, ledger };
  };
  let last = await read();
  await waitFor(
    async () => {
      last = await read();
      return last.balance.available === last.ledger.available && last.balance.held === last.ledger.held;
    },
    { timeoutMs: 5_000, what: "the balance to agree with the ledger" },
  ).catch(() => {});
  expect(last.balance).toEqual(last.ledger);
}

describe("STOP, then a send", () => {
  const number = "263771100001";
  it("lists the number, replies from the number written to (billed), and the send reaches no carrier, unbilled", async () => {
    await handsetSends(number, "  Stop ");
    await waitFor(() => listed(h.acct, number), { what: "the opt-out" });
    // The configured reply: a send of the account, from the short code, to the handset, billed.
    await waitFor(() => atSmsc(number).length === 1, { what: "the opt-out reply at the SMSC" });
    expect(atSmsc(number)[0]).toMatchObject({
      source_addr: SHORT_CODE,
      text: expect.stringContaining("START"),
    });
    const reply = await h.pool.query<{ charge: number; sender_id: string; status: string }>(
      `SELECT m.charge, m.sender_id, m.status FROM inbound_messages i JOIN messages m ON m.id = i.reply_message_id
        WHERE i."from" = $1`,
      [number],
    );
    expect(reply.rows[0]?.charge).toBeGreaterThan(0);
    expect(reply.rows[0]?.sender_id).toBe(SHORT_CODE);

    const before = await balanceNow(h.pool, h.acct.id);
    const sent = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: { to: "+263771100001", from: "SHIRI", message: "offer" },
    });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ status: "failed", operator_response: "OPTED_OUT", charge: "0" });
    const id = (sent.body as { id: string }).id;
    // Nothing was held for it (the reply's hold may have been captured meanwhile: available alone).
    expect((await balanceNow(h.pool, h.acct.id))?.available).toBe(before?.available);
    const read = await call(h.t.base, "GET", `/api/v1/sms/${id}`, { headers: h.acct.headers });
    expect(read.body).toMatchObject({
      data: { status: "failed", operator_response: "OPTED_OUT", charge: "0" },
    });
    // A message that is going somewhere would be at the SMSC by the time a later one is: send one after it.
    const later = await h.send("+263771100099", "after");
    await h.waitUntilSettled([later]);
    expect(atSmsc(number)).toHaveLength(1);
    await waitFor(
      () => rx.received.some((r) => r.event.type === "message.failed" && r.event.data.id === id),
      {
        what: "message.failed for the opted-out send",
      },
    );
    await expectLedgerBalanced(h.acct);
  });

  it("calls back contact.opted_out with the number, when and why, signed", async () => {
    await waitFor(() => rx.received.some((r) => r.event.type === "contact.opted_out"), {
      what: "the callback",
    });
    const got = rx.received.find(
      (r) => r.event.type === "contact.opted_out" && (r.event.data as { number?: string }).number === number,
    );
    expect(got?.event.data).toEqual({
      number,
      at: expect.any(String),
      reason: "keyword",
      keyword: "STOP",
      inbound_message_id: expect.any(String),
    });
    expect(verifySignature(secret, got?.body ?? "", String(got?.headers["shiri-signature"]))).toBe(true);
  });

  it("a bulk send with that number is accepted whole: its item failed at 0, the others sent and billed", async () => {
    const res = await call(h.t.base, "POST", "/api/v1/sms/bulk", {
      headers: h.acct.headers,
      body: { to: ["+263771100002", "0771100001", "+263771100003"], from: "SHIRI", message: "bulk" },
    });
    expect(res.status).toBe(202);
    const data = (
      res.body as { data: { charge: number; items: { id: string; status: string; charge: number }[] } }
    ).data;
    const [a, opted, b] = data.items;
    expect(opted).toMatchObject({ status: "failed", charge: 0 });
    expect(a).toMatchObject({ status: "enqueued" });
    expect(data.charge).toBe((a?.charge ?? 0) + (b?.charge ?? 0));
    await h.waitUntilSettled([a?.id ?? "", b?.id ?? ""], { delivered: true });
    expect(atSmsc("263771100002")).toHaveLength(1);
    expect(atSmsc(number)).toHaveLength(1); // still only the reply
    const bulk = await call(h.t.base, "GET", `/api/v1/sms/${opted?.id}`, { headers: h.acct.headers });
    expect(bulk.body).toMatchObject({ data: { status: "failed", operator_response: "OPTED_OUT" } });
    await expectLedgerBalanced(h.acct);
    const report = await audit(h.pool, { stuckMinutes: 1_000_000, receiptHours: 1_000_000 });
    expect(report.clean, JSON.stringify(report)).toBe(true);
  });

  it("a preview says so (failed, charge 0), and takes an inbound number as `from`", async () => {
    const res = await call(h.t.base, "POST", "/api/v1/sms/preview", {
      headers: h.acct.headers,
      body: { to: ["+263771100004", `+${number}`], from: SHORT_CODE, message: "preview" },
    });
    expect(res.status).toBe(200);
    const data = (res.body as { data: { charge: number; items: { status: string; charge: number }[] } }).data;
    expect(data.items[1]).toMatchObject({ status: "failed", charge: 0 });
    expect(data.items[0]).toMatchObject({ status: "enqueued" });
    expect(data.charge).toBe(data.items[0]?.charge);
  });

  it("an idempotent send to it stores and replays the failed answer", async () => {
    const send = () =>
      call(h.t.base, "POST", "/api/v1/sms", {
        headers: { ...h.acct.headers, "idempotency-key": "opted-out-1" },
        body: { to: number, from: "SHIRI", message: "again" },
      });
    const first = await send();
    expect(first.body).toMatchObject({ status: "failed", operator_response: "OPTED_OUT", charge: "0" });
    expect((await send()).body).toEqual(first.body);
  });

  it("another account's sends still reach the number, and its list is its own", async () => {
    expect(await listed(other, number)).toBe(false);
    const res = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: other.headers,
      body: { to: number, from: "SHIRI", message: "from another sender" },
    });
    expect(res.body).toMatchObject({ status: "enqueued" });
    await h.waitUntilSettled([(res.body as { id: string }).id], { delivered: true });
    expect(atSmsc(number).map((a) => a.text)).toContain("from another sender");
  });
});

describe("a send accepted before the STOP", () => {
  it("fails OPTED_OUT while it still waits, its hold released, and never reaches the SMSC", async () => {
    const number = "263771100051";
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const res = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: { to: `+${number}`, from: "SHIRI", message: "tomorrow's offer", send_at: later },
    });
    const id = (res.body as { id: string }).id;
    const before = await balanceNow(h.pool, h.acct.id);
    await handsetSends(number, "quit");
    await waitFor(async () => (await h.statusOf([id])).get(id)?.status === "failed", {
      what: "the waiting send failed",
    });
    expect((await h.statusOf([id])).get(id)).toMatchObject({ operator_response: "OPTED_OUT" });
    // Its hold is back (the opt-out reply, sent meanwhile, holds its own: waited for first).
    await waitFor(
      async () =>
        (
          await h.pool.query("SELECT 1 FROM inbound_messages WHERE \"from\" = $1 AND reply = 'sent'", [
            number,
          ])
        ).rowCount === 1,
      { what: "the opt-out reply to be sent" },
    );
    const reply = await h.pool.query<{ charge: number }>(
      `SELECT m.charge FROM inbound_messages i JOIN messages m ON m.id = i.reply_message_id WHERE i."from" = $1`,
      [number],
    );
    const charge = (await h.pool.query<{ charge: number }>("SELECT charge FROM messages WHERE id = $1", [id]))
      .rows[0]?.charge;
    expect((await balanceNow(h.pool, h.acct.id))?.available).toBe(
      (before?.available ?? 0) + (charge ?? 0) - (reply.rows[0]?.charge ?? 0),
    );
    await expectLedgerBalanced(h.acct);
    // The reply alone reaches the SMSC, not the offer.
    await waitFor(() => atSmsc(number).length > 0, { what: "the opt-out reply at the SMSC" });
    const next = await h.send("+263771100098", "after");
    await h.waitUntilSettled([next]);
    expect(atSmsc(number).map((a) => a.source_addr)).toEqual([SHORT_CODE]);
  });
});

describe("START, then a send", () => {
  it("takes the number off the list (contact.opted_in) and the send is delivered", async () => {
    const number = "263771100011";
    await handsetSends(number, "STOP", LONG_NUMBER);
    await waitFor(() => listed(h.acct, number), { what: "the opt-out" });
    await handsetSends(number, "start", LONG_NUMBER);
    await waitFor(async () => !(await listed(h.acct, number)), { what: "the opt-in" });
    await waitFor(
      () =>
        rx.received.some(
          (r) =>
            r.event.type === "contact.opted_in" && (r.event.data as { number?: string }).number === number,
        ),
      { what: "contact.opted_in" },
    );
    const id = await h.send(`+${number}`, "welcome back");
    await h.waitUntilSettled([id], { delivered: true });
    const status = (await h.statusOf([id])).get(id);
    expect(status).toMatchObject({ status: "success", delivered: true });
    // The STOP's reply went from the long number it was sent to; START has no reply configured.
    expect(atSmsc(number).map((a) => [a.source_addr, a.text.startsWith("You will")])).toEqual([
      [LONG_NUMBER, true],
      ["SHIRI", false],
    ]);
  });
});

describe("STOP after the number was opted back in", () => {
  /** The rows a number's messages left: each PDU kept, and each message made. */
  async function stored(number: string): Promise<{ parts: number; messages: string[] }> {
    const parts = await h.pool.query("SELECT 1 FROM mobile_originated WHERE source_addr = $1", [number]);
    const messages = await h.pool.query<{ keyword: string | null }>(
      `SELECT keyword FROM inbound_messages WHERE "from" = $1 ORDER BY received_at, id`,
      [number],
    );
    return { parts: parts.rowCount ?? 0, messages: messages.rows.map((r) => r.keyword ?? "") };
  }

  it("by START opts it out again: a second STOP after another message is no repeat", async () => {
    const number = "263771100071";
    await handsetSends(number, "STOP");
    await handsetSends(number, "START");
    await handsetSends(number, "STOP");
    await waitFor(async () => (await stored(number)).messages.length === 3, { what: "three messages" });
    expect(await stored(number)).toEqual({ parts: 3, messages: ["STOP", "START", "STOP"] });
    expect(await listed(h.acct, number)).toBe(true);
    const sent = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: { to: number, from: "SHIRI", message: "offer" },
    });
    expect(sent.body).toMatchObject({ status: "failed", operator_response: "OPTED_OUT", charge: "0" });
  });

  it("by the API opts it out again: the same STOP after the list changed is no repeat", async () => {
    const number = "263771100072";
    await handsetSends(number, "STOP");
    await waitFor(() => listed(h.acct, number), { what: "the opt-out" });
    const removed = await call(h.t.base, "DELETE", `/api/v1/opt-outs/${number}`, { headers: h.acct.headers });
    expect(removed.status).toBe(200);
    await handsetSends(number, "STOP");
    await waitFor(async () => (await stored(number)).messages.length === 2, { what: "two messages" });
    expect(await listed(h.acct, number)).toBe(true);
  });

  it("while the list is as the STOP left it, the same PDU again is still the SMSC's repeat", async () => {
    const number = "263771100073";
    await handsetSends(number, "STOP");
    await waitFor(() => listed(h.acct, number), { what: "the opt-out" });
    await handsetSends(number, "STOP");
    // A message after it: the repeat, had it been stored, would be by then.
    await handsetSends(number, "hello");
    await waitFor(async () => (await stored(number)).messages.length === 2, { what: "two messages" });
    expect(await stored(number)).toEqual({ parts: 2, messages: ["STOP", ""] });
  });

  it("a START the SMSC may be resending after a STOP leaves the number out", async () => {
    // START, STOP, then the same START PDU: the SMSC's resend or the handset's? The number stays out.
    const number = "263771100075";
    await handsetSends(number, "START");
    await handsetSends(number, "STOP");
    await waitFor(() => listed(h.acct, number), { what: "the opt-out" });
    await handsetSends(number, "START");
    await handsetSends(number, "hello");
    await waitFor(async () => (await stored(number)).messages.length >= 3, { what: "the message after" });
    expect(await stored(number)).toEqual({ parts: 3, messages: ["START", "STOP", ""] });
    expect(await listed(h.acct, number)).toBe(true);
  });

  it("an SMSC that resends two unanswered PDUs, in their order, has each stored once", async () => {
    // A text then STOP were taken; their answers were lost (a dropped connection, a window of PDUs
    // unanswered), so the SMSC sends both again: the text's copy has STOP stored after it.
    const number = "263771100074";
    await handsetSends(number, "thanks");
    await handsetSends(number, "STOP");
    await waitFor(() => listed(h.acct, number), { what: "the opt-out" });
    await handsetSends(number, "thanks");
    await handsetSends(number, "STOP");
    await handsetSends(number, "hello");
    await waitFor(async () => (await stored(number)).messages.length >= 3, { what: "the message after" });
    expect(await stored(number)).toEqual({ parts: 3, messages: ["", "STOP", ""] });
  });
});

describe("a destination the SMSC writes in national form (TON 2)", () => {
  const national = LONG_NUMBER.slice(3); // 772000000
  it("is the account's number: a STOP to it opts out, a long message to it is routed", async () => {
    const number = "263771100081";
    const stop = await sendMobileOriginated(h.sims.get("econet").boundSessionList(), {
      from: number,
      to: national,
      dest_addr_ton: 2,
      text: "STOP",
    });
    expect(stop.sent.map((s) => s.command_status)).toEqual([0]);
    await waitFor(() => listed(h.acct, number), { what: "the opt-out" });
    const long = await sendMobileOriginated(h.sims.get("econet").boundSessionList(), {
      from: "263771100082",
      to: national,
      dest_addr_ton: 2,
      text: "z".repeat(60),
      partOctets: 30,
    });
    expect(long.sent.map((s) => s.command_status)).toEqual([0, 0]);
    const routed = async () =>
      (
        await h.pool.query<{ account_id: string | null; to: string }>(
          `SELECT account_id, "to" FROM inbound_messages WHERE "from" IN ($1, $2) ORDER BY "from"`,
          [number, "263771100082"],
        )
      ).rows;
    await waitFor(async () => (await routed()).length === 2, { what: "both messages" });
    expect(await routed()).toEqual([
      { account_id: h.acct.id, to: LONG_NUMBER },
      { account_id: h.acct.id, to: LONG_NUMBER },
    ]);
  });
});

describe("HELP", () => {
  it("is answered with the configured reply, billed as a normal send", async () => {
    const number = "263771100021";
    const before = (await balanceNow(h.pool, h.acct.id))?.available ?? 0;
    await handsetSends(number, "help");
    await waitFor(() => atSmsc(number).length === 1, { what: "the help reply" });
    expect(atSmsc(number)[0]).toMatchObject({ source_addr: SHORT_CODE, text: "Call 0242 000 000" });
    const { rows } = await h.pool.query<{ id: string; charge: number }>(
      `SELECT m.id, m.charge FROM inbound_messages i JOIN messages m ON m.id = i.reply_message_id WHERE i."from" = $1`,
      [number],
    );
    await h.waitUntilSettled([rows[0]?.id ?? ""], { delivered: true });
    expect((await balanceNow(h.pool, h.acct.id))?.available).toBe(before - (rows[0]?.charge ?? 0));
    expect(await listed(h.acct, number)).toBe(false);
    await expectLedgerBalanced(h.acct);
  });
});

describe("a stored reply longer than MAX_SEGMENTS", () => {
  it("is not sent (counted not_sent), never as more segments than a send may have", async () => {
    const number = "263771100092";
    const notSentBefore = await keywordReplies("not_sent");
    // Set before replies were checked when set: 839 UCS-2 characters are 13 segments.
    await h.pool.query("UPDATE inbound_keywords SET help_reply = $2 WHERE account_id = $1", [
      h.acct.id,
      `✓${"a".repeat(838)}`,
    ]);
    try {
      await handsetSends(number, "HELP");
      await waitFor(async () => (await keywordReplies("not_sent")) === notSentBefore + 1, {
        what: "the reply counted not sent",
      });
      const { rows } = await h.pool.query<{ reply: string; reply_message_id: string | null }>(
        `SELECT reply, reply_message_id FROM inbound_messages WHERE "from" = $1`,
        [number],
      );
      expect(rows).toEqual([{ reply: "not_sent", reply_message_id: null }]);
      const next = await h.send("+263771100096", "after");
      await h.waitUntilSettled([next]);
      expect(atSmsc(number)).toEqual([]);
    } finally {
      await h.pool.query("UPDATE inbound_keywords SET help_reply = $2 WHERE account_id = $1", [
        h.acct.id,
        "Call 0242 000 000",
      ]);
    }
  });
});

describe("HELP from an opted-out number", () => {
  it("gets no reply, and the message and the counter say it was opted out, not sent", async () => {
    const number = "263771100091";
    const sentBefore = await keywordReplies("sent");
    const optedOutBefore = await keywordReplies("opted_out");
    await handsetSends(number, "STOP");
    await waitFor(async () => (await keywordReplies("sent")) === sentBefore + 1, {
      what: "the STOP's reply",
    });
    await handsetSends(number, "HELP");
    await waitFor(async () => (await keywordReplies("opted_out")) === optedOutBefore + 1, {
      what: "the HELP reply counted as opted out",
    });
    expect(await keywordReplies("sent")).toBe(sentBefore + 1);
    const { rows } = await h.pool.query<{ reply: string; status: string; response: string; charge: number }>(
      `SELECT i.reply, m.status, m.operator_response AS response, m.charge FROM inbound_messages i
         JOIN messages m ON m.id = i.reply_message_id
        WHERE i."from" = $1 AND i.keyword = 'HELP'`,
      [number],
    );
    expect(rows).toEqual([{ reply: "opted_out", status: "failed", response: "OPTED_OUT", charge: 0 }]);
    const next = await h.send("+263771100097", "after");
    await h.waitUntilSettled([next]);
    expect(atSmsc(number).map((a) => a.text)).toEqual([expect.stringContaining("START")]);
  });
});

describe("an inbound number as `from`", () => {
  it("sends from the account's own number, written as listed; another account cannot", async () => {
    const res = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: { to: "+263771100061", from: LONG_NUMBER, message: "from our number" },
    });
    expect(res.body).toMatchObject({ status: "enqueued", sender_id: LONG_NUMBER });
    await h.waitUntilSettled([(res.body as { id: string }).id], { delivered: true });
    expect(atSmsc("263771100061")).toMatchObject([{ source_addr: LONG_NUMBER, text: "from our number" }]);
    const refused = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: other.headers,
      body: { to: "+263771100062", from: LONG_NUMBER, message: "not ours" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: { type: "ERR_BAD_REQUEST" },
      message: "unknown or unapproved sender id",
    });
  });
});

describe("the opt-out list through the API", () => {
  it("POST lists a number once (201, then 200), in any of its forms", async () => {
    const add = (number: string) =>
      call(h.t.base, "POST", "/api/v1/opt-outs", { headers: h.acct.headers, body: { number } });
    const first = await add("0771100031");
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      status: "success",
      message: "number opted out",
      data: { number: "263771100031", reason: "api", keyword: null, inbound_message_id: null },
    });
    const again = await add("+263771100031");
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      message: "number already opted out",
      data: { number: "263771100031" },
    });
    const bad = await add("not a number");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: { code: "VALIDATION_ERROR", validation_errors: [{ field: "number" }] },
    });
    await waitFor(
      () =>
        rx.received.some(
          (r) =>
            r.event.type === "contact.opted_out" &&
            (r.event.data as { number?: string; reason?: string }).reason === "api",
        ),
      { what: "contact.opted_out by the API" },
    );
  });

  it("GET pages newest first; DELETE takes a number off (200), then it is not found (404)", async () => {
    for (const n of ["263771100041", "263771100042", "263771100043"])
      await call(h.t.base, "POST", "/api/v1/opt-outs", { headers: h.acct.headers, body: { number: n } });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await call(h.t.base, "GET", `/api/v1/opt-outs${query}`, { headers: h.acct.headers });
      const page = (res.body as { data: { items: { number: string }[]; next_cursor: string | null } }).data;
      seen.push(...page.items.map((i) => i.number));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.slice(0, 3)).toEqual(["263771100043", "263771100042", "263771100041"]);
    expect(new Set(seen).size).toBe(seen.length);
    const removed = await call(h.t.base, "DELETE", "/api/v1/opt-outs/+263771100042", {
      headers: h.acct.headers,
    });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ status: "success", message: "number opted in" });
    const gone = await call(h.t.base, "DELETE", "/api/v1/opt-outs/263771100042", { headers: h.acct.headers });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ status: "error", error: { code: "NOT_FOUND" } });
  });

  it("another account never sees the list nor changes it", async () => {
    const res = await call(h.t.base, "GET", "/api/v1/opt-outs", { headers: other.headers });
    expect((res.body as { data: { items: unknown[] } }).data.items).toEqual([]);
    const del = await call(h.t.base, "DELETE", "/api/v1/opt-outs/263771100041", { headers: other.headers });
    expect(del.status).toBe(404);
    expect(await listed(h.acct, "263771100041")).toBe(true);
  });
});

describe("every callback", () => {
  it("received so far was signed with the account's secret", () => {
    expect(rx.received.length).toBeGreaterThan(0);
    const unsigned = rx.received.filter(
      (r) => !verifySignature(secret, r.body, String(r.headers["shiri-signature"])),
    );
    expect(unsigned.map((r) => r.event.type)).toEqual([]);
    // Filtered: this webhook named the contact events and message.failed, not message.received.
    expect(new Set(rx.received.map((r) => r.event.type))).toEqual(
      new Set(["contact.opted_out", "contact.opted_in", "message.failed"]),
    );
  });
});
