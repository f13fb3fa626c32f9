/**
 * shiri_receipts_total counts a receipt once it is applied. A receipt Shiri cannot apply (the
 * database out of reach) is refused with ESME_RX_T_APPN and the SMSC sends it again: the refused
 * tries are not counted, so the metric says how many receipts the carrier sent, not how many times
 * it had to send them. Real SMPP over loopback to the receipt stage, real Postgres behind a relay
 * that is cut.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CARRIERS } from "../../carriers/index.ts";
import { createPool, withTransaction } from "../../src/db/pool.ts";
import { createLogger } from "../../src/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { IdTally } from "../../src/receipts/id-tally.ts";
import { ReceiptStage } from "../../src/receipts/receipt-stage.ts";
import { STATUS } from "../../src/smpp/command-status.ts";
import { SmppSession } from "../../src/smpp/session.ts";
import { createTestDatabase } from "../support/database.ts";
import { startForeignSmsc } from "../support/foreign-smsc.ts";
import { relayTo } from "../support/postgres-relay.ts";
import { insertSentMessage } from "../support/sent-message.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("shiri_receipts_total and receipts the SMSC sends again", () => {
  it("a receipt refused while the database is out of reach counts once, when it is applied", async () => {
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const direct = createPool(db.url, 1);
    cleanups.push(() => direct.end());
    await insertSentMessage(direct, "7001");

    // The receipt stage reaches the database through the relay, as a worker across a network.
    const relay = await relayTo(db.url);
    cleanups.push(() => relay.close());
    const pool = createPool(relay.url, 2);
    cleanups.push(() => pool.end());
    const smsc = startForeignSmsc();
    const port = await smsc.start();
    cleanups.push(() => smsc.stop());
    const settings = { ...CARRIERS.econet.smpp, host: "127.0.0.1", port, enquire_link_interval_ms: 60_000 };
    const metrics = createMetrics();
    const logger = createLogger("silent");
    const stage = new ReceiptStage({
      transact: (fn) => withTransaction(pool, fn),
      link: "econet",
      settings,
      validityHours: 24,
      logger,
      metrics,
      tally: new IdTally(metrics),
    });
    const session = new SmppSession({
      settings,
      logger,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      onDeliverSm: (pdu) => stage.take(pdu),
    });
    cleanups.push(() => session.close());
    session.start();
    expect(await session.waitUntilBound(5_000)).toBe(true);
    const counted = async () =>
      (await metrics.receipts.get()).values.find(
        (v) => v.labels.link === "econet" && v.labels.state === "DELIVRD",
      )?.value ?? 0;
    const receipt = { id: "7001", stat: "DELIVRD", handset: "263771234567" };

    relay.cut("closing");
    // The SMSC tries twice while the database is away: refused each time, so it tries again.
    for (let i = 0; i < 2; i++) expect(await smsc.sendReceipt(receipt)).toBe(STATUS.ESME_RX_T_APPN);
    expect(await counted()).toBe(0);

    relay.mend();
    expect(await smsc.sendReceipt(receipt)).toBe(STATUS.ESME_ROK);
    const part = await direct.query<{ receipt_state: string | null }>(
      "SELECT receipt_state FROM message_parts WHERE smsc_id = '7001'",
    );
    expect(part.rows).toEqual([{ receipt_state: "DELIVRD" }]);
    // Three sends of one receipt: it counts once.
    expect(await counted()).toBe(1);
  }, 15_000);
});
