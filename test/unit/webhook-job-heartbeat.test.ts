import { afterEach, describe, expect, it, vi } from "vitest";
import { WEBHOOK_JOB_HEARTBEAT_SECONDS } from "../../src/queue/webhook-jobs.ts";
import { jobHeartbeat } from "../../src/webhooks/callbacks.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("the callback jobs' heartbeat", () => {
  it("touches every running job together, a third of the heartbeat apart, and nothing once none runs", async () => {
    vi.useFakeTimers();
    const touches: string[][] = [];
    const heartbeat = jobHeartbeat(
      async (ids) => {
        touches.push(ids);
      },
      () => {},
    );
    const third = (WEBHOOK_JOB_HEARTBEAT_SECONDS * 1_000) / 3;
    heartbeat.running("a");
    heartbeat.running("b");
    await vi.advanceTimersByTimeAsync(third);
    expect(touches).toEqual([["a", "b"]]);
    heartbeat.done("a");
    await vi.advanceTimersByTimeAsync(third);
    expect(touches).toEqual([["a", "b"], ["b"]]);
    heartbeat.done("b");
    await vi.advanceTimersByTimeAsync(10 * third);
    expect(touches).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a failed touch is reported and the next one still comes", async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let calls = 0;
    const heartbeat = jobHeartbeat(
      async () => {
        calls++;
        if (calls === 1) throw new Error("connection lost");
      },
      (err) => errors.push(err),
    );
    heartbeat.running("a");
    await vi.advanceTimersByTimeAsync((WEBHOOK_JOB_HEARTBEAT_SECONDS * 2_000) / 3);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
    heartbeat.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
