import { describe, expect, it } from "vitest";
import { Coalescer } from "../../src/coalescer.ts";

/** A call that does not end until the test lets it, recording what each call was given. */
function heldCalls() {
  const calls: { requests: readonly number[]; release: (fail?: Error) => void }[] = [];
  const run = (requests: readonly number[]) =>
    new Promise<number[]>((resolve, reject) => {
      calls.push({
        requests,
        release: (fail) => (fail ? reject(fail) : resolve(requests.map((r) => r * 10))),
      });
    });
  return { calls, run };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("Coalescer", () => {
  it("answers a lone request at once, in a call of its own", async () => {
    const { calls, run } = heldCalls();
    const coalescer = new Coalescer(run, { maxBatch: 10, maxInFlight: 1 });
    const answer = coalescer.take(7);
    await tick();
    expect(calls.map((c) => c.requests)).toEqual([[7]]);
    calls[0]?.release();
    expect(await answer).toBe(70);
  });

  it("sends the requests that arrive while calls are running together, in order, each answered by its own", async () => {
    const { calls, run } = heldCalls();
    const sizes: number[] = [];
    const coalescer = new Coalescer(run, { maxBatch: 100, maxInFlight: 2, onBatch: (n) => sizes.push(n) });
    const answers = [1, 2, 3, 4, 5, 6].map((n) => coalescer.take(n));
    await tick();
    // The first two go alone (two may run at once); the rest wait for a call to end.
    expect(calls.map((c) => c.requests)).toEqual([[1], [2]]);
    calls[0]?.release();
    await tick();
    expect(calls.map((c) => c.requests)).toEqual([[1], [2], [3, 4, 5, 6]]);
    calls[1]?.release();
    calls[2]?.release();
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40, 50, 60]);
    expect(sizes).toEqual([1, 1, 4]);
  });

  it("never hands a call more than maxBatch requests", async () => {
    const { calls, run } = heldCalls();
    const coalescer = new Coalescer(run, { maxBatch: 3, maxInFlight: 1 });
    const answers = Array.from({ length: 8 }, (_, n) => coalescer.take(n));
    for (let i = 0; i < 4; i++) {
      await tick();
      calls[i]?.release();
    }
    expect(await Promise.all(answers)).toEqual([0, 10, 20, 30, 40, 50, 60, 70]);
    expect(calls.map((c) => c.requests)).toEqual([[0], [1, 2, 3], [4, 5, 6], [7]]);
  });

  it("fails the requests of a failed call only, and goes on with the next", async () => {
    const { calls, run } = heldCalls();
    const coalescer = new Coalescer(run, { maxBatch: 10, maxInFlight: 1 });
    const first = coalescer.take(1);
    const second = [coalescer.take(2), coalescer.take(3)];
    await tick();
    calls[0]?.release(new Error("database gone"));
    await expect(first).rejects.toThrow("database gone");
    await tick();
    calls[1]?.release();
    expect(await Promise.all(second)).toEqual([20, 30]);
  });

  it("fails a batch whose call answers the wrong number of requests, or throws before it starts", async () => {
    const short = new Coalescer(async (requests: readonly number[]) => requests.slice(1), {
      maxBatch: 10,
      maxInFlight: 1,
    });
    await expect(short.take(1)).rejects.toThrow("a batch of 1 got 0 answers");
    const throwing = new Coalescer<number, number>(
      () => {
        throw new Error("bad input");
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    await expect(throwing.take(1)).rejects.toThrow("bad input");
    // The coalescer is not stuck after a failure.
    await expect(throwing.take(2)).rejects.toThrow("bad input");
  });
});
