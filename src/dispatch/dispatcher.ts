import { z } from "zod";
import type { Operator, SmscIdFormat } from "../../carriers/index.ts";
import { isDatabaseUnavailable, type Pool, type Transact, withTransaction } from "../db/pool.ts";
import { type ClaimedMessage, claimMessages, type Delivery, releaseLease } from "../lifecycle/index.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { LoopPace } from "../periodic.ts";
import {
  cancelDispatchJobs,
  dispatchQueue,
  type FetchedJob,
  failDispatchJobs,
  fetchDispatchJobs,
  type Queue,
  touchDispatchJobs,
} from "../queue/boss.ts";
import {
  AWAKE_AFTER_WORK_MS,
  IDLE_BACKSTOP_POLLS,
  OPT_OUTS_TOPIC,
  type WorkSignals,
} from "../queue/wakeups.ts";
import { HeldReceipts } from "../receipts/held-receipts.ts";
import type { ReceiptStage } from "../receipts/receipt-stage.ts";
import { BatchLease } from "./batch-lease.ts";
import type { CarrierLink } from "./carrier-link.ts";
import { PartsRecorder } from "./parts-recorder.ts";
import { type DispatchOutcome, emptyOutcome, recordParts, settleBatch } from "./settle.ts";
import { type LateAcceptance, submitMessages } from "./submit-messages.ts";

const jobData = z.object({ messageIds: z.array(z.uuid()).min(1) });

/** How far past the room left one fetch may go when its jobs turn out larger than the mean. */
const OVERSHOOT = 4;

/** How often a running batch writes the segments accepted since its last write. */
const PARTS_FLUSH_MS = 25;

/** Waits between tries of a batch's settle transaction before each job is settled on its own. */
const SETTLE_RETRY_MS = [100, 500, 2_000];

/**
 * While the database is unreachable (a restart, a failover) the settle is tried again this often,
 * for as long as the batch's lease would hold its messages and at least SETTLE_OUTAGE_MIN_MS:
 * giving up would forget what the carrier accepted, and the job's next run would send it again.
 */
const SETTLE_OUTAGE_RETRY_MS = 250;
const SETTLE_OUTAGE_MIN_MS = 60_000;

export interface DispatcherOptions {
  operator: Operator;
  pool: Pool;
  boss: Queue;
  /** Opens the settle's transactions: their callback events are enqueued in them. */
  transact: Transact;
  link: CarrierLink;
  /**
   * True while this link is the one the operator's messages go over (the first of its route that is
   * not down): asked before each fetch, so a link stops taking the operator's jobs as soon as an
   * earlier one in the route is back.
   */
  serving: () => boolean;
  logger: Logger;
  metrics: Metrics;
  submitIdFormat: SmscIdFormat;
  /** Message ids per job when dispatch enqueues retries. */
  batchSize: number;
  /** Messages one worker submits at once for this operator, over all its batches. */
  maxMessagesInFlight: number;
  /** Batches in flight at once: while one settles, the next is being submitted. */
  maxBatchesInFlight: number;
  /** Jobs taken in one fetch, at most. */
  maxJobsPerFetch: number;
  /** How often it polls while awake: just after work, or waiting for room or for the link. */
  pollMs: number;
  /** The due watch's poll (IDLE_POLL_MS): idle, it sleeps until woken, and a dozen of these at most. */
  idlePollMs: number;
  signals: WorkSignals;
  lockSeconds: number;
  /** pg-boss's heartbeat on dispatch jobs: the batch touches its jobs well within it. */
  jobHeartbeatSeconds: number;
  validityHours: number;
  /** DISPATCH_MAX_UNANSWERED_SENDS. */
  maxUnansweredSends: number;
  /** DISPATCH_MAX_REFUSALS. */
  maxRefusals: number;
  /** This link's receipts stage: told which segments a batch holds and when they are recorded. */
  receipts: ReceiptStage;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Takes one operator's dispatch jobs in batches and submits their messages over one link, while
 * that link is the operator's route (`serving`). The cost is per batch, not per job: one fetch takes many jobs, one statement claims all
 * their messages, one transaction records every outcome and completes every job. Under load the
 * batches grow by themselves, since jobs gather while the previous batches are in flight. It stops
 * taking jobs while the link is down or its breaker open — the messages wait in the queue.
 */
export class Dispatcher {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly batches = new Set<Promise<void>>();
  private messagesInFlight = 0;
  /** Message ids per job, averaged over recent fetches: sizes the next fetch to the room left. */
  private meanJobSize: number;
  /**
   * Just after work it polls (what was enqueued without an announcement, see wakeups.ts, is found
   * this way); idle, it sleeps until woken: by an announcement, by the due watch (a job come due by
   * the clock, or one whose announcement was lost; src/queue/due-watch.ts), or when stopping. The
   * long idle wait is only the backstop should the watch be stuck.
   */
  private readonly pace: LoopPace;
  private stopListening: () => void = () => {};
  /** The leases of the batches in flight: an opt-out announced renews each at once. */
  private readonly leases = new Set<BatchLease>();

  constructor(private readonly options: DispatcherOptions) {
    this.meanJobSize = options.batchSize;
    this.pace = new LoopPace({
      busyMs: options.pollMs,
      idleMs: IDLE_BACKSTOP_POLLS * options.idlePollMs,
      awakeMs: AWAKE_AFTER_WORK_MS,
    });
  }

  start(): void {
    this.running = true;
    const unsubscribe = [
      this.options.signals.on(dispatchQueue(this.options.operator), () => this.pace.wake()),
      this.options.signals.on(OPT_OUTS_TOPIC, () => {
        for (const lease of this.leases) lease.renewNow();
      }),
    ];
    this.stopListening = () => {
      for (const stop of unsubscribe) stop();
    };
    this.loop = this.run();
  }

  /**
   * Stops taking jobs and waits for the batches in flight to be settled. A submit not yet on the
   * wire is withdrawn and its message given back for another worker (`maySend` below): the wait
   * is for the answers to what the carrier already has, a response timeout at most, not for
   * everything the batches claimed.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.stopListening();
    this.pace.wake();
    await this.loop;
    if (this.batches.size === 0) return;
    const { logger, operator } = this.options;
    logger.info(
      { operator, batches: this.batches.size, messages: this.messagesInFlight },
      "stopping: waiting for the carrier's answers to what is on the wire; the rest is given back",
    );
    await Promise.allSettled([...this.batches]);
    logger.info({ operator }, "stopped: every batch settled");
  }

  private async run(): Promise<void> {
    const { link, pollMs } = this.options;
    while (this.running) {
      if (link.breaker.opened || link.session.state !== "bound" || !this.options.serving()) {
        await sleep(pollMs);
        continue;
      }
      // Half-open: one job probes the carrier; closed: fill up to the in-flight bounds.
      const probing = link.breaker.halfOpen;
      const maxBatches = probing ? 1 : this.options.maxBatchesInFlight;
      const room = this.options.maxMessagesInFlight - this.messagesInFlight;
      if (this.batches.size >= maxBatches || room <= 0) {
        await Promise.race([...this.batches, sleep(pollMs)]);
        continue;
      }
      const wanted = probing
        ? 1
        : jobsToFetch({
            room,
            meanJobSize: this.meanJobSize,
            largestJobSize: this.options.batchSize,
            maxJobsPerFetch: this.options.maxJobsPerFetch,
          });
      let jobs: FetchedJob[] = [];
      try {
        jobs = await fetchDispatchJobs(this.options.boss, this.options.pool, this.options.operator, wanted);
      } catch (err) {
        this.options.logger.error({ err, operator: this.options.operator }, "fetching dispatch jobs failed");
        await sleep(pollMs);
        continue;
      }
      if (jobs.length === 0) {
        await this.pace.next();
        continue;
      }
      this.pace.worked();
      const batch = this.runBatch(jobs)
        .catch((err: unknown) =>
          // What was submitted and not recorded goes again once the messages' locks run out.
          this.options.logger.error({ err, operator: this.options.operator }, "dispatch batch failed"),
        )
        .finally(() => this.batches.delete(batch));
      this.batches.add(batch);
    }
  }

  private async runBatch(fetched: FetchedJob[]): Promise<void> {
    const { operator, logger } = this.options;
    const jobs: { job: FetchedJob; messageIds: string[] }[] = [];
    const malformed: FetchedJob[] = [];
    for (const job of fetched) {
      const parsed = jobData.safeParse(job.data);
      if (parsed.success) jobs.push({ job, messageIds: parsed.data.messageIds });
      else malformed.push(job);
    }
    if (malformed.length > 0) {
      // Nothing could ever run them: cancelled alone, while the others in the batch go on.
      logger.error({ operator, jobs: malformed.map((j) => j.id) }, "malformed dispatch job cancelled");
      await cancelDispatchJobs(this.options.boss, operator, malformed).catch(() => {});
    }
    const messageIds = [...new Set(jobs.flatMap((j) => j.messageIds))];
    if (messageIds.length === 0) return;
    const size = messageIds.length / Math.max(1, jobs.length);
    this.meanJobSize = Math.max(1, (this.meanJobSize + size) / 2);

    this.messagesInFlight += messageIds.length;
    // The batch's lease on its messages: its own, kept alive for as long as it runs, and asked
    // before each submit goes on the wire (batch-lease.ts).
    const fetchedJobs = jobs.map((j) => j.job);
    const lease = new BatchLease({
      pool: this.options.pool,
      operator,
      logger,
      metrics: this.options.metrics,
      lockSeconds: this.options.lockSeconds,
      jobs: {
        touch: () => touchDispatchJobs(this.options.boss, this.options.pool, operator, fetchedJobs),
        heartbeatSeconds: this.options.jobHeartbeatSeconds,
      },
    });
    try {
      let claim: Awaited<ReturnType<typeof claimMessages>>;
      try {
        claim = await withTransaction(this.options.pool, (tx) =>
          claimMessages(tx, messageIds, {
            owner: lease.owner,
            lockSeconds: lease.lockSeconds,
            validityHours: this.options.validityHours,
          }),
        );
      } catch (err) {
        // Nothing was submitted: the jobs run again (pg-boss retry), and whatever the claim may
        // have taken is given back as soon as the database answers again.
        logger.error({ err, operator, jobs: jobs.length }, "dispatch claim failed");
        await this.giveBack(messageIds, lease, fetchedJobs, String(err));
        return;
      }
      lease.keep(claim.claimed.map((m) => m.id));
      this.leases.add(lease);
      const held = new HeldReceipts();
      const recorder = new PartsRecorder({
        pool: this.options.pool,
        link: this.options.link.name,
        logger,
        held,
        flushMs: PARTS_FLUSH_MS,
        maxParts: 500,
        claimedAt: claim.claimedAt,
      });
      let outcome: DispatchOutcome;
      let lateAcceptances: LateAcceptance[];
      try {
        ({ outcome, lateAcceptances } = await submitMessages(
          {
            operator,
            link: this.options.link,
            logger,
            metrics: this.options.metrics,
            submitIdFormat: this.options.submitIdFormat,
            validityHours: this.options.validityHours,
            running: () => this.running,
            onAccepted: (part) => {
              this.options.receipts.hold(part.smscId, held);
              recorder.add(part);
            },
            lateAnswerSeconds: this.options.link.session.lateWindowMs() / 1000,
            maxUnansweredSends: this.options.maxUnansweredSends,
            maxRefusals: this.options.maxRefusals,
            // Stopping, nothing more goes on the wire: the message goes back to the queue.
            maySend: (id) => this.running && lease.owns(id),
          },
          claim.claimed,
        ));
      } catch (err) {
        held.handOver(this.options.receipts.apply); // no receipt waits on a batch that will not settle
        throw err;
      } finally {
        await recorder.close();
      }
      outcome.deferred = claim.busy;
      outcome.notDue = claim.notDue;
      this.count(outcome, claim.claimed);
      lease.settling();
      let delivered: ReadonlySet<string> = new Set();
      try {
        delivered = await this.settle(jobs, outcome, held, lease, recorder.written);
      } finally {
        // Receipts that came by another bind, or while the settle was open, were kept aside as
        // early receipts: matched now that the segments are committed, not at the next sweep.
        await this.options.receipts.segmentsRecorded(outcome.acceptedParts, delivered);
      }
      for (const late of lateAcceptances)
        void late.then((part) => part && this.recordLate(part, claim.claimedAt));
    } finally {
      lease.stop();
      this.leases.delete(lease);
      this.messagesInFlight -= messageIds.length;
    }
  }

  /**
   * After a claim whose outcome is unknown (its connection died with it): the batch's holds are
   * released and its jobs failed (run again after pg-boss's retry delay) once the database answers,
   * tried for as long as the holds would last anyway. Whatever is not done then, the short lease
   * and the jobs' heartbeat undo by themselves.
   */
  private async giveBack(
    messageIds: readonly string[],
    lease: BatchLease,
    jobs: readonly FetchedJob[],
    error: string,
  ): Promise<void> {
    const { pool, boss, operator, logger } = this.options;
    const until = Date.now() + this.options.lockSeconds * 1_000;
    for (;;) {
      try {
        const released = await releaseLease(pool, messageIds, lease.owner);
        await failDispatchJobs(boss, operator, jobs, error);
        if (released > 0)
          logger.info({ operator, messages: released }, "claims given back after a failed claim");
        return;
      } catch (err) {
        if (!isDatabaseUnavailable(err) || Date.now() >= until) {
          logger.warn({ err, operator }, "claims not given back: they are free once their lease runs out");
          return;
        }
        await sleep(SETTLE_OUTAGE_RETRY_MS);
      }
    }
  }

  /**
   * A segment whose submit timed out was accepted after all: recorded now, so the message's retry
   * (held back until the late-answer window has passed) finds it accepted and does not send it again.
   */
  private async recordLate(part: DispatchOutcome["acceptedParts"][number], claimedAt: Date): Promise<void> {
    const { operator, logger, pool } = this.options;
    try {
      await withTransaction(pool, (tx) =>
        recordParts(tx, this.options.link.name, [part], undefined, claimedAt),
      );
      await this.options.receipts.segmentsRecorded([part]);
    } catch (err) {
      logger.error(
        { err, operator, message: part.messageId },
        "late answer not recorded: the segment may be sent again",
      );
    }
  }

  /**
   * The batch's settle, tried a few times: what the carrier accepted must be recorded, or it
   * would be sent again. If it still fails, each job is settled on its own, so one job's trouble
   * does not fail the others; a job whose settle fails is failed and runs again. Returns the
   * messages the settle delivered as it accepted them (none when it was settled job by job).
   */
  private async settle(
    batch: readonly { job: FetchedJob; messageIds: readonly string[] }[],
    outcome: DispatchOutcome,
    held: HeldReceipts,
    lease: BatchLease,
    earlyRecorded: ReadonlyMap<string, string | null>,
  ): Promise<ReadonlySet<string>> {
    const jobs = batch.map((j) => j.job);
    const { operator, logger, transact, boss } = this.options;
    const route = { operator, link: this.options.link.name };
    const receipts = held.seal();
    const settleOptions = {
      batchSize: this.options.batchSize,
      lockSeconds: this.options.lockSeconds,
      owner: lease.owner,
    };
    const outageUntil = Date.now() + Math.max(SETTLE_OUTAGE_MIN_MS, this.options.lockSeconds * 1_000);
    for (let attempt = 0; ; attempt++) {
      try {
        const { delivered, deliveredAtAcceptance, leaseLost } = await transact((tx) =>
          settleBatch(tx, boss, route, jobs, outcome, receipts, settleOptions, earlyRecorded),
        );
        held.committed();
        lease.lostAtSettle(leaseLost);
        this.observeDelivered(delivered);
        // The batch took these receipts by their segments' exact ids (held-receipts.ts).
        if (receipts.length > 0)
          this.options.receipts.observe({
            delivered: [],
            duplicates: 0,
            relations: { exact: receipts.length },
          });
        return new Set(deliveredAtAcceptance);
      } catch (err) {
        // Settling job by job only helps when one job is at fault, never while the database is
        // away; and stopping (say, the bind slot's lease lost to the same outage) is no reason to
        // forget what the carrier accepted: stop() waits for this.
        const outage = isDatabaseUnavailable(err) && Date.now() < outageUntil;
        const wait = outage
          ? (SETTLE_RETRY_MS[attempt] ?? SETTLE_OUTAGE_RETRY_MS)
          : this.running
            ? SETTLE_RETRY_MS[attempt]
            : undefined;
        if (attempt < SETTLE_RETRY_MS.length || wait === undefined)
          logger.error({ err, operator, attempt, jobs: jobs.length }, "dispatch settle failed");
        if (wait === undefined) break;
        await sleep(wait);
      }
    }
    held.handOver(this.options.receipts.apply);
    for (const { job, part } of splitByJob(batch, outcome)) {
      try {
        const { leaseLost } = await transact((tx) =>
          settleBatch(tx, boss, route, [job], part, [], settleOptions),
        );
        lease.lostAtSettle(leaseLost);
      } catch (err) {
        logger.error({ err, operator, job: job.id }, "dispatch job settle failed");
        await failDispatchJobs(boss, operator, [job], String(err)).catch(() => {});
      }
    }
    return new Set();
  }

  private observeDelivered(delivered: readonly Delivery[]): void {
    for (const d of delivered)
      this.options.metrics.deliveryLatency.observe({ operator: d.operator }, d.seconds);
  }

  private count(outcome: DispatchOutcome, claimed: readonly ClaimedMessage[]): void {
    const { metrics, operator } = this.options;
    metrics.messagesFinal.inc({ operator, status: "success" }, outcome.succeeded.length);
    metrics.messagesFinal.inc({ operator, status: "failed" }, outcome.failed.length);
    // From when the message was due: a scheduled one's wait for its send_at is not dispatch time.
    const receivedAt = new Map(claimed.map((m) => [m.id, m.due_at.getTime()]));
    const now = Date.now();
    for (const s of outcome.succeeded) {
      const at = receivedAt.get(s.id);
      if (at !== undefined) metrics.dispatchLatency.observe({ operator }, (now - at) / 1000);
    }
  }
}

/**
 * Jobs to take in one fetch: enough to fill the room left at the mean job size seen so far, but
 * never so many that jobs of the largest size (a bulk send's) would put more than OVERSHOOT times
 * the room in one batch — its messages are locked and its receipts wait until it settles.
 */
export function jobsToFetch(input: {
  room: number;
  meanJobSize: number;
  largestJobSize: number;
  maxJobsPerFetch: number;
}): number {
  const atMean = Math.floor(input.room / input.meanJobSize);
  const ceiling = Math.floor((OVERSHOOT * input.room) / input.largestJobSize);
  return Math.max(1, Math.min(input.maxJobsPerFetch, ceiling, atMean));
}

/** The batch's outcome cut along its jobs: each message goes with the first job that carries it. */
function splitByJob(
  jobs: readonly { job: FetchedJob; messageIds: readonly string[] }[],
  outcome: DispatchOutcome,
): { job: FetchedJob; part: DispatchOutcome }[] {
  const owner = new Map<string, DispatchOutcome>();
  const parts = jobs.map(({ job, messageIds }) => {
    const part: DispatchOutcome = emptyOutcome();
    for (const id of messageIds) if (!owner.has(id)) owner.set(id, part);
    return { job, part };
  });
  const of = (id: string) => owner.get(id);
  for (const p of outcome.acceptedParts) of(p.messageId)?.acceptedParts.push(p);
  for (const s of outcome.succeeded) of(s.id)?.succeeded.push(s);
  for (const f of outcome.failed) of(f.id)?.failed.push(f);
  for (const r of outcome.retry) of(r.id)?.retry.push(r);
  for (const id of outcome.deferred) of(id)?.deferred.push(id);
  for (const n of outcome.notDue) of(n.id)?.notDue.push(n);
  return parts;
}
