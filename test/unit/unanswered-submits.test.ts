import { describe, expect, it } from "vitest";
import { UnansweredSubmits } from "../../src/smpp/unanswered-submits.ts";

describe("UnansweredSubmits", () => {
  it("has nothing to wait for while every submit written is answered", () => {
    const submits = new UnansweredSubmits();
    expect(submits.doneBefore(submits.mark())).toBeNull();
    submits.done(submits.written());
    expect(submits.doneBefore(submits.mark())).toBeNull();
  });

  it("waits for the submits written before the mark, answered in any order, not for later ones", async () => {
    const submits = new UnansweredSubmits();
    const first = submits.written();
    const second = submits.written();
    const mark = submits.mark();
    const later = submits.written();
    let resumed = false;
    const waiting = submits.doneBefore(mark)?.then(() => {
      resumed = true;
    });
    expect(waiting).toBeDefined();
    submits.done(second);
    await Promise.resolve();
    expect(resumed).toBe(false);
    submits.done(first);
    await waiting;
    expect(resumed).toBe(true);
    // The submit written after the mark is still unanswered: a receipt arriving now waits for it.
    expect(submits.doneBefore(submits.mark())).not.toBeNull();
    submits.done(later);
    expect(submits.doneBefore(submits.mark())).toBeNull();
  });

  it("resumes receipts in turn as the frontier passes each one's mark", async () => {
    const submits = new UnansweredSubmits();
    const serials = [submits.written()];
    const early = submits.doneBefore(submits.mark());
    serials.push(submits.written());
    const late = submits.doneBefore(submits.mark());
    const order: string[] = [];
    void early?.then(() => order.push("early"));
    void late?.then(() => order.push("late"));
    submits.done(serials[0] as number);
    await Promise.resolve();
    expect(order).toEqual(["early"]);
    submits.done(serials[1] as number);
    await Promise.resolve();
    expect(order).toEqual(["early", "late"]);
  });

  it("lets a receipt go after its longest wait, the answer before it still to come", async () => {
    const submits = new UnansweredSubmits(20);
    submits.written();
    const started = Date.now();
    await submits.doneBefore(submits.mark());
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    // A receipt arriving now waits again for that answer, and is let go in its turn.
    let resumed = false;
    const next = submits.doneBefore(submits.mark())?.then(() => {
      resumed = true;
    });
    await Promise.resolve();
    expect(resumed).toBe(false);
    await next;
    expect(resumed).toBe(true);
  });
});
