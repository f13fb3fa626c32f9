import { Coalescer } from "../coalescer.ts";
import type { Pool, Transact } from "../db/pool.ts";
import { type Logger, numberForLog } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { paced } from "../periodic.ts";
import type { Queue } from "../queue/boss.ts";
import type { DeliverSm } from "../smpp/session.ts";
import { pendingReplies, sendKeywordReply } from "./replies.ts";
import { assembleOverdue, type InboundPart, partOf, type StoredBatch, storeParts } from "./store-parts.ts";

export interface InboundDeps {
  pool: Pool;
  boss: Queue;
  /** Opens the stage's transactions (the worker's put their callback events in jobs at once). */
  transact: Transact;
  logger: Logger;
  metrics: Metrics;
  repeatWindowSeconds: number;
  dispatchBatchSize: number;
  /** MAX_SEGMENTS: a keyword reply that needs more is not sent. */
  maxSegments: number;
}

/** Most parts stored in one transaction. */
const MAX_BATCH = 500;

/**
 * One link's mobile-originated messages, a stage of its own fed by the SMPP session's deliver_sm
 * (on any of the link's binds): each is stored before it is acknowledged, with the others that
 * arrived while the previous batch was being written, in one transaction. One batch at a time,
 * so a number's messages reach the opt-out list in the order the link carried them.
 */
export class InboundStage {
  /** Each part's answer: null once stored, or why it could not be. */
  private readonly batches: Coalescer<InboundPart, Error | null>;

  constructor(
    private readonly link: string,
    private readonly deps: InboundDeps,
  ) {
    this.batches = new Coalescer((parts) => this.store(parts), { maxBatch: MAX_BATCH, maxInFlight: 1 });
  }

  /** A deliver_sm that is not a receipt; settles once it is committed (then it is acknowledged). */
  async take(pdu: DeliverSm): Promise<void> {
    const refused = await this.batches.take(partOf(this.link, pdu));
    if (refused) throw refused;
  }

  private async store(parts: readonly InboundPart[]): Promise<(Error | null)[]> {
    const { transact, repeatWindowSeconds } = this.deps;
    const store = (some: readonly InboundPart[]) =>
      transact((tx) => storeParts(tx, some, { repeatWindowSeconds })).then((batch) => this.observe(batch));
    try {
      await store(parts);
      return parts.map(() => null);
    } catch (err) {
      if (parts.length === 1) throw err;
      // One part the database refuses must not hold back the others (the SMSC would send them
      // all again, forever): each is tried alone, and only those that fail again are refused.
      const answers: (Error | null)[] = [];
      for (const part of parts)
        answers.push(
          await store([part]).then(
            () => null,
            (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
          ),
        );
      const failed = answers.filter((a) => a !== null).length;
      if (failed > 0)
        this.deps.logger.error({ err, link: this.link, failed }, "mobile-originated messages not stored");
      return answers;
    }
  }

  private observe(batch: StoredBatch): void {
    observeStored(this.deps, this.link, batch);
  }
}

function observeStored(
  deps: InboundDeps,
  link: string | null,
  batch: Partial<Pick<StoredBatch, "stored" | "repeats">> & Omit<StoredBatch, "stored" | "repeats">,
): void {
  const { metrics, logger } = deps;
  if (link !== null) {
    if (batch.stored) metrics.inboundParts.inc({ link, outcome: "stored" }, batch.stored);
    if (batch.repeats) metrics.inboundParts.inc({ link, outcome: "repeat" }, batch.repeats);
  }
  for (const m of batch.messages) {
    metrics.inboundMessages.inc({
      link: m.link,
      routing: m.accountId ? "routed" : "unrouted",
      completeness: m.complete ? "complete" : "incomplete",
    });
    if (!m.accountId)
      logger.warn(
        { link: m.link, to: numberForLog(m.to), parts: m.parts },
        "inbound message for an address no account owns",
      );
    else if (!m.complete)
      logger.warn({ link: m.link, parts: m.parts }, "inbound message incomplete: parts never came");
  }
  if (batch.unknownCodings > 0 && link !== null)
    metrics.inboundDataCodings.inc({ link }, batch.unknownCodings);
  for (const c of batch.optOutChanges) metrics.optOutChanges.inc({ change: c.change, reason: c.reason });
  for (const id of batch.replies) void reply(deps, id);
}

async function reply(deps: InboundDeps, inboundId: string): Promise<void> {
  try {
    const outcome = await sendKeywordReply(
      {
        pool: deps.pool,
        boss: deps.boss,
        dispatchBatchSize: deps.dispatchBatchSize,
        maxSegments: deps.maxSegments,
      },
      inboundId,
    );
    if (outcome !== "none") deps.metrics.keywordReplies.inc({ outcome });
    if (outcome === "not_sent") deps.logger.warn({ inbound_id: inboundId }, "keyword reply not sent");
  } catch (err) {
    // Left pending: the upkeep's sweep sends it.
    deps.logger.error({ err, inbound_id: inboundId }, "keyword reply failed; will retry");
  }
}

/** How long a reply may stay pending before the sweep takes it from a process that died. */
const REPLY_STALE_SECONDS = 30;
const SWEEP_LIMIT = 500;

/**
 * The worker's inbound upkeep, over every link: messages whose parts have waited longer than
 * `reassemblySeconds` become incomplete messages, and keyword replies left pending are sent.
 * Safe in every worker at once. Every `intervalMs` while there may be something for it: for as
 * long after a part this process took (wake()) as its message could take to come due, or after a
 * pass that found something; else every `idleMs` (docs/decisions/0011-idle-worker.md), which is
 * how it takes over what a process that stopped left behind.
 */
export function startInboundUpkeep(
  deps: InboundDeps & { reassemblySeconds: number; intervalMs: number; idleMs: number },
): {
  /** A part was taken: keep the upkeep's own pace until its message is due for it. */
  wake(): void;
  stop(): Promise<void>;
} {
  const upkeep = paced(
    {
      busyMs: deps.intervalMs,
      idleMs: Math.max(deps.intervalMs, deps.idleMs),
      awakeMs: (deps.reassemblySeconds + REPLY_STALE_SECONDS) * 1000 + 2 * deps.intervalMs,
    },
    async () => {
      let found = false;
      for (;;) {
        const made = await deps.transact((tx) =>
          assembleOverdue(tx, { olderThanSeconds: deps.reassemblySeconds, limit: SWEEP_LIMIT }),
        );
        observeStored(deps, null, made);
        if (made.messages.length > 0) found = true;
        if (made.messages.length < SWEEP_LIMIT) break;
      }
      const stale = await pendingReplies(deps.pool, {
        olderThanSeconds: REPLY_STALE_SECONDS,
        limit: SWEEP_LIMIT,
      });
      for (const id of stale) await reply(deps, id);
      return found || stale.length > 0;
    },
    (err) => deps.logger.error({ err }, "inbound upkeep failed"),
  );
  return { wake: () => upkeep.keepAwake(), stop: () => upkeep.stop() };
}
