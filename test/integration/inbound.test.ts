import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startControl } from "../../carriers/simulator/control.ts";
import { type MobileOriginated, sendMobileOriginated } from "../../carriers/simulator/mobile-originated.ts";
import { addInboundNumber } from "../../src/inbound/inbound-numbers.ts";
import { verifySignature } from "../../src/webhooks/signing.ts";
import { CLI_TEST_TIMEOUT_MS, inParallel, PARALLEL_RUNS, shiri } from "../support/cli.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call, type TestAccount } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * Two-way messaging over loopback SMPP: the carrier simulator sends mobile-originated messages to
 * a link bound by two worker processes (so two binds), and Shiri stores each once, joins parts,
 * routes the message to the account owning the address written to, and calls it back, signed.
 */
let h: DispatchHarness;
let other: TestAccount;
let rx: Receiver;
let secret: string;
const SHORT_CODE = "33000";

interface InboundItem {
  id: string;
  from: string;
  to: string;
  message: string;
  operator: string;
  received_at: string;
  parts: number;
  complete: boolean;
  encoding: string;
  keyword: string | null;
}

beforeAll(async () => {
  h = await startDispatchHarness({
    env: { INBOUND_REASSEMBLY_SECONDS: "2", INBOUND_SWEEP_MS: "200", SMPP_ECONET_MAX_BINDS: "2" },
  });
  // A second worker: the econet link is bound twice, once by each process.
  await h.t.startAnother("worker");
  other = await h.t.account();
  await addInboundNumber(h.pool, h.acct.id, SHORT_CODE);
  rx = await startReceiver();
  const put = await call(h.t.base, "PUT", "/api/v1/webhook", {
    headers: h.acct.headers,
    body: { url: rx.url, events: ["message.received"] },
  });
  secret = (put.body as { data: { signing_secret: string } }).data.signing_secret;
  await waitFor(() => h.sims.get("econet").boundSessions === 2, { timeoutMs: 20_000, what: "two binds" });
}, 60_000);

afterAll(async () => {
  await rx?.stop();
  await h?.stop();
});

/** Sends an MO from the econet simulator; every deliver_sm must be answered ESME_ROK. */
async function mo(message: Omit<MobileOriginated, "to"> & { to?: string }) {
  const result = await sendMobileOriginated(h.sims.get("econet").boundSessionList(), {
    to: SHORT_CODE,
    ...message,
  });
  expect(result.sent.map((s) => s.command_status)).toEqual(result.sent.map(() => 0));
  return result;
}

async function inbox(account: TestAccount, query = ""): Promise<InboundItem[]> {
  const res = await call(h.t.base, "GET", `/api/v1/inbound${query}`, { headers: account.headers });
  expect(res.status).toBe(200);
  return (res.body as { data: { items: InboundItem[] } }).data.items;
}

/** The account's inbound messages from one number, once there are `count` of them. */
async function fromNumber(number: string, count = 1): Promise<InboundItem[]> {
  let items: InboundItem[] = [];
  await waitFor(
    async () => {
      items = await inbox(h.acct, `?from=${number}`);
      return items.length >= count;
    },
    { timeoutMs: 10_000, what: `${count} inbound message(s) from ${number}` },
  );
  return items;
}

describe("a single-part message", () => {
  const cases = [
    { encoding: "gsm7", text: "Mhoro! Price {5€} @ 10:00", from: "263771000101" },
    { encoding: "ascii", text: "user_name@host $5", from: "263771000102" },
    { encoding: "latin1", text: "Café près de Harare", from: "263771000103" },
    { encoding: "ucs2", text: "Ndatenda 🙏🏾 ✓", from: "263771000104" },
  ] as const;
  for (const c of cases)
    it(`in ${c.encoding} is stored, decoded and routed to the number's owner`, async () => {
      await mo({ from: c.from, text: c.text, encoding: c.encoding });
      const [item] = await fromNumber(c.from);
      expect(item).toMatchObject({
        from: c.from,
        to: SHORT_CODE,
        message: c.text,
        operator: "econet",
        parts: 1,
        complete: true,
        encoding: c.encoding,
        keyword: null,
      });
      const one = await call(h.t.base, "GET", `/api/v1/inbound/${item?.id}`, { headers: h.acct.headers });
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ status: "success", message: "request successful", data: item });
    });

  it("is called back as message.received, signed with the account's secret", async () => {
    await mo({ from: "263771000105", text: "callback me" });
    const [item] = await fromNumber("263771000105");
    await waitFor(() => rx.received.some((r) => r.event.data.id === item?.id), { what: "the callback" });
    const got = rx.received.find((r) => r.event.data.id === item?.id);
    expect(got?.event).toMatchObject({ type: "message.received", data: item });
    expect(verifySignature(secret, got?.body ?? "", String(got?.headers["shiri-signature"]))).toBe(true);
  });

  it("a national sender number (TON 2) is shown in international form", async () => {
    await mo({ from: "0771000106", text: "local", source_addr_ton: 2 });
    expect((await fromNumber("263771000106"))[0]?.message).toBe("local");
  });
});

describe("a concatenated message", () => {
  it("is joined from UDH parts (8-bit reference) sent out of order over two binds", async () => {
    // 40 octets a part: "€" is an escape and a code, cut between parts 1 and 2 (octets 39 and 40).
    const text = `${"a".repeat(39)}€${"b".repeat(60)}`;
    const sent = await mo({
      from: "263771000201",
      text,
      partOctets: 40,
      order: [3, 1, 2],
      acrossBinds: true,
    });
    expect(sent.parts).toBe(3);
    expect(new Set(sent.sent.map((s) => s.session))).toEqual(new Set([0, 1]));
    const [item] = await fromNumber("263771000201");
    expect(item).toMatchObject({ message: text, parts: 3, complete: true, encoding: "gsm7" });
  });

  it("is joined from 16-bit-reference UDH parts in UCS-2, a surrogate pair cut between two", async () => {
    const text = `${"x".repeat(9)}😀 and more text after it`;
    await mo({
      from: "263771000202",
      text,
      encoding: "ucs2",
      concatenation: "udh16",
      partOctets: 20,
      acrossBinds: true,
    });
    const [item] = await fromNumber("263771000202");
    expect(item).toMatchObject({ message: text, complete: true, encoding: "ucs2" });
    expect(item?.parts).toBe(Math.ceil((text.length * 2) / 20));
  });

  it("is joined from SAR TLV parts, in IA5 and Latin-1", async () => {
    await mo({
      from: "263771000203",
      text: "sar@ia5_".repeat(10),
      encoding: "ascii",
      concatenation: "sar",
      partOctets: 30,
    });
    await mo({
      from: "263771000204",
      text: "élan ".repeat(12),
      encoding: "latin1",
      concatenation: "sar",
      partOctets: 25,
    });
    expect((await fromNumber("263771000203"))[0]).toMatchObject({ message: "sar@ia5_".repeat(10), parts: 3 });
    expect((await fromNumber("263771000204"))[0]).toMatchObject({ message: "élan ".repeat(12), parts: 3 });
  });

  it("with a part that never comes becomes an incomplete message after the wait, never nothing", async () => {
    const text = `${"1".repeat(30)}${"2".repeat(30)}${"3".repeat(30)}`;
    await mo({ from: "263771000205", text, partOctets: 30, order: [3, 1] });
    const [item] = await fromNumber("263771000205");
    expect(item).toMatchObject({ message: `${"1".repeat(30)}${"3".repeat(30)}`, parts: 2, complete: false });
  });
});

describe("a deliver_sm the SMSC sends again", () => {
  it("is acknowledged each time and stored once, single or a part", async () => {
    await mo({ from: "263771000301", text: "only once", copies: 3 });
    await mo({ from: "263771000302", text: "p".repeat(50), partOctets: 25, copies: 2, acrossBinds: true });
    await fromNumber("263771000301");
    await fromNumber("263771000302");
    const { rows } = await h.pool.query<{ source_addr: string; n: number }>(
      `SELECT source_addr, count(*)::int AS n FROM mobile_originated
        WHERE source_addr IN ('263771000301', '263771000302') GROUP BY source_addr ORDER BY source_addr`,
    );
    expect(rows).toEqual([
      { source_addr: "263771000301", n: 1 },
      { source_addr: "263771000302", n: 2 },
    ]);
    expect(await inbox(h.acct, "?from=263771000301")).toHaveLength(1);
    expect(await inbox(h.acct, "?from=263771000302")).toHaveLength(1);
  });
});

describe("an address no account owns", () => {
  it(
    "keeps the message unrouted, listed for the operator, shown to no account",
    async () => {
      await mo({ from: "263771000401", to: "44444", text: "anyone there?" });
      await waitFor(
        async () =>
          (await h.pool.query("SELECT 1 FROM inbound_messages WHERE \"from\" = '263771000401'")).rowCount ===
          1,
        { what: "the unrouted message" },
      );
      const listed = await shiri(h.t.database.url, ["inbound", "list", "--unrouted"]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout)).toContainEqual(
        expect.objectContaining({
          from: "263771000401",
          to: "44444",
          message: "anyone there?",
          link: "econet",
        }),
      );
      expect(await inbox(h.acct, "?from=263771000401")).toEqual([]);
      expect(await inbox(other, "?from=263771000401")).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("another account", () => {
  it("never sees the first account's inbound messages", async () => {
    await mo({ from: "263771000501", text: "private" });
    const [item] = await fromNumber("263771000501");
    expect(await inbox(other)).toEqual([]);
    const res = await call(h.t.base, "GET", `/api/v1/inbound/${item?.id}`, { headers: other.headers });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ status: "error", error: { code: "NOT_FOUND" } });
  });
});

describe("GET /api/v1/inbound", () => {
  it("pages newest first with a cursor bound to its filters, and refuses an unknown filter", async () => {
    for (const text of ["one", "two", "three"]) await mo({ from: "263771000601", text });
    await fromNumber("263771000601", 3);
    const first = await call(h.t.base, "GET", "/api/v1/inbound?from=%2B263771000601&limit=2", {
      headers: h.acct.headers,
    });
    const page = (first.body as { data: { items: InboundItem[]; next_cursor: string } }).data;
    expect(page.items.map((i) => i.message)).toEqual(["three", "two"]);
    const second = await call(
      h.t.base,
      "GET",
      `/api/v1/inbound?from=263771000601&limit=2&cursor=${encodeURIComponent(page.next_cursor)}`,
      { headers: h.acct.headers },
    );
    expect((second.body as { data: { items: InboundItem[]; next_cursor: null } }).data).toMatchObject({
      items: [expect.objectContaining({ message: "one" })],
      next_cursor: null,
    });
    const misused = await call(
      h.t.base,
      "GET",
      `/api/v1/inbound?cursor=${encodeURIComponent(page.next_cursor)}`,
      {
        headers: h.acct.headers,
      },
    );
    expect(misused.status).toBe(400);
    const unknown = await call(h.t.base, "GET", "/api/v1/inbound?sender=1", { headers: h.acct.headers });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: { code: "VALIDATION_ERROR" } });
  });

  it("lists the account's inbound numbers", async () => {
    const res = await call(h.t.base, "GET", "/api/v1/inbound-numbers", { headers: h.acct.headers });
    expect(res.body).toMatchObject({ status: "success", data: [{ number: SHORT_CODE }] });
    const none = await call(h.t.base, "GET", "/api/v1/inbound-numbers", { headers: other.headers });
    expect(none.body).toMatchObject({ data: [] });
  });
});

describe("the operator's commands", () => {
  it(
    "give an account a number (one owner), set its keywords, and rehearse a handset with simulate-mo",
    async () => {
      const control = await startControl(h.sims.simulators, { host: "127.0.0.1", port: 0 });
      try {
        const url = h.t.database.url;
        const [added, taken, keywords] = await inParallel(
          [
            ["inbound-number", "add", "--account", h.acct.id, "+263772000555"],
            ["inbound-number", "add", "--account", other.id, SHORT_CODE],
            [
              "keywords",
              "set",
              "--account",
              h.acct.id,
              "--opt-out-words",
              "stop,halt",
              "--help-reply",
              "Dial 123",
            ],
          ],
          PARALLEL_RUNS,
          (args) => shiri(url, args),
        );
        // After the first set: HALT is an opt-out word by then.
        const bad = await shiri(url, ["keywords", "set", "--account", h.acct.id, "--opt-in-words", "HALT"]);
        expect(added?.code, added?.stderr).toBe(0);
        expect(JSON.parse(added?.stdout ?? "")).toMatchObject({ number: "263772000555", added: true });
        expect(taken?.code).toBe(1);
        expect(taken?.stderr).toContain("belongs to another account");
        expect(keywords?.code, keywords?.stderr).toBe(0);
        expect(JSON.parse(keywords?.stdout ?? "")).toMatchObject({
          lists: { opt_out: ["STOP", "HALT"] },
          replies: { help: "Dial 123", opt_out: null },
        });
        expect(bad?.code).toBe(1);
        expect(bad?.stderr).toContain("HALT is both opt_out and opt_in");

        // A handset writes HALT to the new number, through the control port, as an operator would.
        const rehearsed = await shiri(url, [
          "simulate-mo",
          "--control-port",
          String(control.port),
          "--operator",
          "econet",
          "--from",
          "263771000701",
          "--to",
          "263772000555",
          "--text",
          "halt",
          "--encoding",
          "ucs2",
        ]);
        expect(rehearsed.code, rehearsed.stderr).toBe(0);
        expect(JSON.parse(rehearsed.stdout)).toEqual({
          parts: 1,
          sent: [{ part: 1, session: 0, command_status: 0 }],
        });
        const [item] = await fromNumber("263771000701");
        expect(item).toMatchObject({
          to: "263772000555",
          message: "halt",
          encoding: "ucs2",
          keyword: "HALT",
        });
        await waitFor(
          async () =>
            (
              await call(h.t.base, "GET", "/api/v1/opt-outs?number=263771000701", { headers: h.acct.headers })
            ).text.includes("HALT"),
          { what: "the opt-out by the account's own keyword" },
        );

        const removed = await shiri(url, [
          "inbound-number",
          "remove",
          "--account",
          h.acct.id,
          "263772000555",
        ]);
        expect(removed.code, removed.stderr).toBe(0);
        const listed = await shiri(url, ["inbound-number", "list", "--account", h.acct.id]);
        expect(JSON.parse(listed.stdout)).toEqual([{ number: SHORT_CODE, created_at: expect.any(String) }]);
      } finally {
        await control.stop();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("keywords set", () => {
  it(
    "refuses a reply that cannot fit MAX_SEGMENTS in its encoding, and keeps the one before",
    async () => {
      const url = h.t.database.url;
      // 839 UCS-2 characters: 13 segments of 67, over the 10 a send may have.
      const long = `✓${"a".repeat(838)}`;
      const refused = await shiri(url, ["keywords", "set", "--account", other.id, "--help-reply", long]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("help reply needs 13 segments (ucs2); at most 10 (MAX_SEGMENTS)");
      // A lower MAX_SEGMENTS is the limit: 2 GSM segments of 153 fit 306 characters, not 307.
      const gsm = await inParallel(["b".repeat(306), "b".repeat(307)], 2, (reply) =>
        shiri(url, ["keywords", "set", "--account", other.id, "--opt-in-reply", reply], {
          env: { MAX_SEGMENTS: "2" },
        }),
      );
      expect(gsm.map((r) => r?.code)).toEqual([0, 1]);
      const shown = await shiri(url, ["keywords", "show", "--account", other.id]);
      expect(JSON.parse(shown.stdout)).toMatchObject({ replies: { help: null, opt_in: "b".repeat(306) } });
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("every callback", () => {
  it("received so far was signed with the account's secret", () => {
    expect(rx.received.length).toBeGreaterThan(0);
    const unsigned = rx.received.filter(
      (r) => !verifySignature(secret, r.body, String(r.headers["shiri-signature"])),
    );
    expect(unsigned.map((r) => r.event.type)).toEqual([]);
  });
});
