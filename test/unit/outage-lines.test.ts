import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger, OUTAGE_OVER_AFTER_MS } from "../../src/logger.ts";
import { loggedLines } from "../support/log-lines.ts";

/** An error the service reads as the database out of reach (here, by its code). */
const unreachable = () =>
  Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
const isOutage = (err: unknown) => (err as { code?: string }).code === "ECONNREFUSED";

const logged = () => loggedLines(isOutage);

describe("a database outage in the log", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("is told by its first failure, then one line when it is over, whatever the loops say meanwhile", async () => {
    const { lines, logger } = logged();
    const sweep = logger.child({ stage: "receipts" });
    sweep.error({ err: unreachable() }, "early receipt sweep failed");
    for (let i = 0; i < 40; i++) {
      sweep.error({ err: unreachable() }, "early receipt sweep failed");
      logger.warn({ err: unreachable(), operator: "econet" }, "fetching dispatch jobs failed");
      await vi.advanceTimersByTimeAsync(500);
    }
    // Every other line goes out as ever, during the outage too.
    logger.error({ err: new Error("a bug") }, "settle failed");
    logger.info("bound");
    expect(lines.map((l) => l.msg)).toEqual([
      "early receipt sweep failed",
      "the database is out of reach: further failures are counted, not logged, until it answers",
      "settle failed",
      "bound",
    ]);
    await vi.advanceTimersByTimeAsync(OUTAGE_OVER_AFTER_MS);
    expect(lines.at(-1)).toMatchObject({
      level: 40,
      msg: "database failures stopped: the lines held back meanwhile, by message",
      held_back: { "early receipt sweep failed": 40, "fetching dispatch jobs failed": 40 },
    });
    // From the first failure to the last (19.5 s later), not to the line 10 s after it.
    expect(lines.at(-1)?.outage_ms).toBe(19_500);
    // The next outage is told again.
    logger.error({ err: unreachable() }, "webhook relay failed; retrying");
    expect(lines.at(-2)?.msg).toBe("webhook relay failed; retrying");
    expect(lines).toHaveLength(7);
  });

  it("of one failure alone lasted nothing: the quiet period after it is not counted", async () => {
    const { lines, logger } = logged();
    logger.warn({ err: unreachable() }, "fetching dispatch jobs failed");
    await vi.advanceTimersByTimeAsync(OUTAGE_OVER_AFTER_MS);
    expect(lines.at(-1)).toMatchObject({
      msg: "database failures stopped: the lines held back meanwhile, by message",
      outage_ms: 0,
      held_back: {},
    });
  });

  it("without the option, every line goes out", () => {
    const lines: unknown[] = [];
    const logger = createLogger("info", {
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk);
          done();
        },
      }),
    });
    for (let i = 0; i < 5; i++) logger.error({ err: unreachable() }, "early receipt sweep failed");
    expect(lines).toHaveLength(5);
  });
});
