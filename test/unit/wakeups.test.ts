import { afterEach, describe, expect, it, vi } from "vitest";
import type { Queryable } from "../../src/db/pool.ts";
import { paced, Waker } from "../../src/periodic.ts";
import {
  ANNOUNCE_EVERY_MS,
  announcementsLost,
  announceWork,
  localSignals,
  WAKE_CHANNEL,
} from "../../src/queue/wakeups.ts";

/** What a transaction was asked to run: the announcements' topics, in order. */
function recorder() {
  const topics: string[][] = [];
  return {
    topics,
    tx: {
      query: async (config: { values?: unknown[] }) => {
        const [channel, due] = config.values ?? [];
        expect(channel).toBe(WAKE_CHANNEL);
        topics.push(due as string[]);
        return { rows: [], rowCount: 0 };
      },
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
  announcementsLost();
});

describe("announcing work", () => {
  it("announces a topic at most once per window per process, each topic on its own clock", async () => {
    vi.useFakeTimers();
    const { topics, tx } = recorder();
    const db = tx as unknown as Queryable;
    await announceWork(db, ["dispatch-econet"]);
    await announceWork(db, ["dispatch-econet", "dispatch-netone"]);
    await announceWork(db, ["dispatch-econet"]);
    vi.advanceTimersByTime(ANNOUNCE_EVERY_MS);
    await announceWork(db, ["dispatch-econet"]);
    expect(topics).toEqual([["dispatch-econet"], ["dispatch-netone"], ["dispatch-econet"]]);
  });

  it("announces again at once after a rolled-back transaction's announcement was lost", async () => {
    vi.useFakeTimers();
    const { topics, tx } = recorder();
    const db = tx as unknown as Queryable;
    await announceWork(db, ["webhook-outbox"]);
    announcementsLost();
    await announceWork(db, ["webhook-outbox"]);
    expect(topics).toEqual([["webhook-outbox"], ["webhook-outbox"]]);
  });
});

describe("signals within a process", () => {
  it("wakes the topic's listeners only, every one of them, until they unsubscribe", () => {
    const signals = localSignals();
    const woken: string[] = [];
    const off = signals.on("a", () => woken.push("a1"));
    signals.on("a", () => woken.push("a2"));
    signals.on("b", () => woken.push("b"));
    signals.wake("a");
    off();
    signals.wake("a");
    signals.wakeAll();
    expect(woken).toEqual(["a1", "a2", "a2", "a2", "b"]);
  });
});

describe("a waker", () => {
  it("ends a sleep early, and a wake with nobody asleep ends the next sleep at once", async () => {
    const waker = new Waker();
    waker.wake();
    const started = Date.now();
    await waker.sleep(60_000);
    const sleeping = waker.sleep(60_000);
    waker.wake();
    await sleeping;
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("a paced duty", () => {
  it("runs at the busy pace while it finds work or was woken lately, at the idle pace otherwise", async () => {
    vi.useFakeTimers();
    const at: number[] = [];
    let work = 2;
    const start = Date.now();
    const duty = paced(
      { busyMs: 100, idleMs: 10_000, awakeMs: 500 },
      async () => {
        at.push(Date.now() - start);
        return work-- > 0;
      },
      () => {},
    );
    await vi.advanceTimersByTimeAsync(1_000);
    // First after a busy interval, then at the busy pace until 500 ms after the last work.
    expect(at.length).toBeGreaterThanOrEqual(5);
    const before = at.length;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(at.length).toBe(before); // idle: the next pass is 8-12 s away
    duty.wake();
    await vi.advanceTimersByTimeAsync(10);
    expect(at.length).toBe(before + 1);
    await duty.stop();
  });

  it("kept awake, runs one pass at once only if it was idle, then keeps the busy pace", async () => {
    vi.useFakeTimers();
    const at: number[] = [];
    const start = Date.now();
    const duty = paced(
      { busyMs: 100, idleMs: 10_000, awakeMs: 1_000 },
      async () => {
        at.push(Date.now() - start);
        return false;
      },
      () => {},
    );
    await vi.advanceTimersByTimeAsync(500);
    expect(at).toHaveLength(1); // the first pass, then idle
    duty.keepAwake(); // idle: a pass at once
    await vi.advanceTimersByTimeAsync(1);
    expect(at).toHaveLength(2);
    duty.keepAwake(); // awake already: no extra pass, the busy pace goes on
    await vi.advanceTimersByTimeAsync(1);
    expect(at).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1_500);
    // About 1 s more at 100 ms, then idle again.
    expect(at.length).toBeGreaterThanOrEqual(10);
    expect(at.length).toBeLessThanOrEqual(13);
    const asleep = at.length;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(at).toHaveLength(asleep);
    await duty.stop();
  });
});
