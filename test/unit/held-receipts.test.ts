import { describe, expect, it } from "vitest";
import { HeldReceipts, ReceiptRegistry } from "../../src/receipts/held-receipts.ts";
import type { Receipt } from "../../src/receipts/read-receipt.ts";

const receipt = (smscId: string): Receipt => ({ smscId, state: "DELIVRD" });

/** Delivers a receipt and says which way it went: into the batch, after it, or the ordinary way at once. */
function deliver(registry: ReceiptRegistry, r: Receipt) {
  const ordinary: Receipt[] = [];
  const done = registry.deliver(r, async (given) => {
    ordinary.push(given);
  });
  return { done, ordinary };
}

describe("ReceiptRegistry", () => {
  it("hands a receipt with the held id itself to its batch, which records it in its settle", async () => {
    const registry = new ReceiptRegistry(true);
    const batch = new HeldReceipts();
    registry.hold("3039", batch);
    const { done, ordinary } = deliver(registry, receipt("3039"));
    expect(batch.takenSoFar()).toEqual([receipt("3039")]);
    batch.seal();
    batch.committed();
    await done;
    expect(ordinary).toEqual([]);
  });

  it("on a tolerant link, a receipt naming a held id as a number waits for the batch, then goes the ordinary way", async () => {
    const registry = new ReceiptRegistry(true);
    const batch = new HeldReceipts();
    registry.hold("3039", batch); // 12345 in hex
    const { done, ordinary } = deliver(registry, receipt("12345"));
    await Promise.resolve();
    // Not taken into the settle (the database matches numbers), and not sent on before it ends.
    expect(batch.takenSoFar()).toEqual([]);
    expect(ordinary).toEqual([]);
    batch.seal();
    batch.committed();
    await done;
    expect(ordinary).toEqual([receipt("12345")]);
  });

  it("a batch that fails to settle lets its number-matched receipts go the ordinary way too", async () => {
    const registry = new ReceiptRegistry(true);
    const batch = new HeldReceipts();
    registry.hold("00ABC", batch);
    const { done, ordinary } = deliver(registry, receipt("abc"));
    batch.handOver(async () => {});
    await done;
    expect(ordinary).toEqual([receipt("abc")]);
  });

  it("a receipt for a batch that failed before it settled goes the ordinary way, not into the batch", async () => {
    const registry = new ReceiptRegistry(false);
    const batch = new HeldReceipts();
    registry.hold("3039", batch);
    // The batch threw while submitting: handed over, never sealed, and its ids still held.
    batch.handOver(async () => {});
    const { done, ordinary } = deliver(registry, receipt("3039"));
    // Before, it was taken into the batch, whose settle never comes: never applied, never answered.
    await done;
    expect(ordinary).toEqual([receipt("3039")]);
    expect(batch.takenSoFar()).toEqual([]);
  });

  it("goes the ordinary way at once: on an exact-only link, for an unknown id, and once the id is forgotten", async () => {
    const exactOnly = new ReceiptRegistry(false);
    exactOnly.hold("3039", new HeldReceipts());
    const strict = deliver(exactOnly, receipt("12345"));
    await strict.done;
    expect(strict.ordinary).toEqual([receipt("12345")]);

    const registry = new ReceiptRegistry(true);
    registry.hold("3039", new HeldReceipts());
    const unknown = deliver(registry, receipt("k3j5h2"));
    await unknown.done;
    expect(unknown.ordinary).toEqual([receipt("k3j5h2")]);

    registry.forget(["3039"]);
    const forgotten = deliver(registry, receipt("12345"));
    await forgotten.done;
    expect(forgotten.ordinary).toEqual([receipt("12345")]);
  });

  it("forgetting one batch's id keeps another batch's id of the same number", async () => {
    const registry = new ReceiptRegistry(true);
    const first = new HeldReceipts();
    const second = new HeldReceipts();
    registry.hold("0a", first);
    registry.hold("A", second); // the same number, held by a later batch
    registry.forget(["0a"]);
    const { done, ordinary } = deliver(registry, receipt("10"));
    await Promise.resolve();
    expect(ordinary).toEqual([]);
    second.seal();
    second.committed();
    await done;
    expect(ordinary).toEqual([receipt("10")]);
  });
});
