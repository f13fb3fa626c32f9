/**
 * The outage log (src/logger.ts, outageLines) as the real components meet it: a database out of
 * reach is told by its first failure and one line when it is over, whichever component fails,
 * however often. Each test gives a component the service's logger, takes the database out of its
 * reach, and counts that component's lines.
 */
import net from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { CARRIERS } from "../../carriers/index.ts";
import { CarrierSimulator, simulatorOptionsFor } from "../../carriers/simulator/index.ts";
import { createPool, isDatabaseOutOfReach } from "../../src/db/pool.ts";
import { encodeGsm7 } from "../../src/domain/segments.ts";
import { listenForWork } from "../../src/queue/wakeups.ts";
import { STATUS } from "../../src/smpp/command-status.ts";
import { SmppSession } from "../../src/smpp/session.ts";
import { createTestDatabase } from "../support/database.ts";
import { loggedLines } from "../support/log-lines.ts";
import { relayTo } from "../support/postgres-relay.ts";
import { waitFor } from "../support/wait-for.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const OUTAGE_TOLD =
  "the database is out of reach: further failures are counted, not logged, until it answers";

/** The service's logger (src/cli/commands.ts), its lines read back. */
function serviceLogger() {
  const { lines, logger } = loggedLines(isDatabaseOutOfReach);
  return { lines, logger, said: (msg: string) => lines.filter((l) => l.msg === msg).length };
}

/** A port nothing listens on: a database that is not there. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("a database out of reach, in the log of", () => {
  it("the receipts' deliver_sm handler: its first failure, then nothing however many receipts", async () => {
    const sim = new CarrierSimulator(
      simulatorOptionsFor("econet", {
        port: 0,
        seed: 7,
        behaviour: { receiptDelayMs: 0, receiptRetryDelayMs: 20, maxReceiptAttempts: 5 },
      }),
    );
    const { port } = await sim.start();
    cleanups.push(() => sim.stop());
    // What the receipt stage meets: a pool whose database does not answer.
    const pool = createPool(`postgres://postgres@127.0.0.1:${await closedPort()}/shiri`, 2);
    cleanups.push(() => pool.end());
    let calls = 0;
    const { logger, said } = serviceLogger();
    const session = new SmppSession({
      settings: { ...CARRIERS.econet.smpp, port, enquire_link_interval_ms: 60_000 },
      logger: logger.child({ link: "econet-1" }),
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      onDeliverSm: async () => {
        calls++;
        await pool.query("SELECT 1");
      },
    });
    cleanups.push(() => session.close());
    session.start();
    expect(await session.waitUntilBound(5_000)).toBe(true);
    for (let i = 0; i < 4; i++)
      await session.submit({
        source_addr: "Shiri",
        destination_addr: "263771234567",
        data_coding: 0,
        short_message: encodeGsm7(`receipt ${i}`),
      });
    await waitFor(() => calls >= 12, { what: "receipts delivered again and again" });
    // Each one still told the SMSC to deliver it again later.
    expect(sim.receiptsSent[0]?.command_status).toBe(STATUS.ESME_RX_T_APPN);
    expect(said("deliver_sm handler failed")).toBe(1);
    expect(said(OUTAGE_TOLD)).toBe(1);
  });

  it.each([
    { cut: "closing" as const, what: "a port that closes each connection" },
    { cut: "silent" as const, what: "a port that never answers" },
  ])("the listening connection: lost once, then not at every reconnect ($what)", async ({ cut }) => {
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const relay = await relayTo(db.url);
    cleanups.push(() => relay.close());
    const { logger, lines, said } = serviceLogger();
    const timeouts = { statementMs: 5_000, lockMs: 2_000, idleInTransactionMs: 5_000, connectMs: 200 };
    const listening = await listenForWork(relay.url, timeouts, logger);
    cleanups.push(() => listening.stop());
    relay.cut(cut);
    // Reconnects after 250, 500 and 1000 ms: the fourth failure comes within 2.5 s.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    relay.mend();
    await waitFor(() => said("listening for work again: every loop looks once") === 1, {
      what: "the listener back",
      timeoutMs: 8_000,
    });
    expect(said("listening connection lost: reconnecting"), JSON.stringify(lines)).toBe(1);
    expect(said(OUTAGE_TOLD)).toBe(1);
  });

  it("the listening connection: a connection ended by the database is an outage too", async () => {
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const { logger, said } = serviceLogger();
    const listening = await listenForWork(db.url, undefined, logger);
    cleanups.push(() => listening.stop());
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    cleanups.push(() => admin.end());
    for (let i = 1; i <= 3; i++) {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        ["shiri-listener"],
      );
      await waitFor(() => said("listening for work again: every loop looks once") === i, {
        what: "the listener back",
      });
    }
    expect(said("listening connection lost: reconnecting")).toBe(1);
  });
});
