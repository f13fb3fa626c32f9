import type { PgBoss } from "pg-boss";
import { z } from "zod";
import type { Operator, SmscIdFormat } from "../../carriers/index.ts";
import { type Pool, withTransaction } from "../db/pool.ts";
import { readSubmitId } from "../domain/smsc-id.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { dispatchQueue } from "../queue/boss.ts";
import { applyEarlyReceipts } from "../receipts/apply-receipts.ts";
import { actionFor, describeStatus, STATUS } from "../smpp/command-status.ts";
import type { SubmitParams } from "../smpp/session.ts";
import { buildSubmits } from "./build-submits.ts";
import type { CarrierLink, LinkOutcome } from "./carrier-link.ts";
import { type ClaimedMessage, claimMessages } from "./claim.ts";
import { type DispatchOutcome, settleDispatch } from "./settle.ts";

/** Throttled submits of a part retried within its job before the message waits for a later run. */
const THROTTLED_TRIES_IN_JOB = 8;

const jobData = z.object({ messageIds: z.array(z.uuid()).min(1) });

export interface DispatcherOptions {
  operator: Operator;
  pool: Pool;
  boss: PgBoss;
  link: CarrierLink;
  logger: Logger;
  metrics: Metrics;
  submitIdFormat: SmscIdFormat;
  batchSize: number;
  jobsInFlight: number;
  pollMs: number;
  lockSeconds: number;
  validityHours: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Takes one operator's dispatch jobs and submits their messages over the operator's link.
 * It stops taking jobs while the link is down or its breaker open — the messages wait in the
 * queue — and keeps several jobs in flight so the SMPP window stays full.
 */
export class Dispatcher {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly jobs = new Set<Promise<void>>();
  private readonly queue: string;

  constructor(private readonly o: DispatcherOptions) {
    this.queue = dispatchQueue(o.operator);
  }

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** Stops taking jobs and waits for those in flight to be settled. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await Promise.allSettled([...this.jobs]);
  }

  private async run(): Promise<void> {
    const { link } = this.o;
    while (this.running) {
      if (link.breaker.opened || link.session.state !== "bound") {
        await sleep(this.o.pollMs);
        continue;
      }
      // Half-open: one job probes the carrier; closed: fill up to the in-flight bound.
      const room = link.breaker.halfOpen
        ? Math.min(1, 1 - this.jobs.size)
        : this.o.jobsInFlight - this.jobs.size;
      if (room <= 0) {
        await Promise.race([...this.jobs, sleep(this.o.pollMs)]);
        continue;
      }
      let fetched: { id: string; data: unknown }[] = [];
      try {
        fetched = await this.o.boss.fetch(this.queue, { batchSize: room });
      } catch (err) {
        this.o.logger.error({ err, operator: this.o.operator }, "fetching dispatch jobs failed");
      }
      if (fetched.length === 0) {
        await sleep(this.o.pollMs);
        continue;
      }
      for (const job of fetched) {
        const run = this.runJob(job).finally(() => this.jobs.delete(run));
        this.jobs.add(run);
      }
    }
  }

  private async runJob(job: { id: string; data: unknown }): Promise<void> {
    const { operator, logger } = this.o;
    try {
      const { messageIds } = jobData.parse(job.data);
      const { claimed, busy } = await withTransaction(this.o.pool, (tx) =>
        claimMessages(tx, messageIds, {
          lockSeconds: this.o.lockSeconds,
          validityHours: this.o.validityHours,
        }),
      );
      const outcome = await this.submitAll(claimed);
      outcome.deferred = busy;
      this.count(outcome, claimed);
      await withTransaction(this.o.pool, (tx) =>
        settleDispatch(tx, this.o.boss, operator, job, outcome, {
          batchSize: this.o.batchSize,
          lockSeconds: this.o.lockSeconds,
        }),
      );
      // Receipts that overtook this run's submit_sm_resp (before or while the settle
      // transaction was open) could not see its segments and went aside: match them now, once
      // the segments are committed, rather than at the next sweep.
      const ids = outcome.acceptedParts.map((p) => p.smscId);
      if (ids.length > 0) {
        const delivered = await withTransaction(this.o.pool, (tx) => applyEarlyReceipts(tx, operator, ids));
        for (const seconds of delivered) this.o.metrics.deliveryLatency.observe({ operator }, seconds);
      }
    } catch (err) {
      // The job runs again later (pg-boss retry); what was recorded stays recorded.
      logger.error({ err, operator, job: job.id }, "dispatch job failed");
      await this.o.boss.fail(this.queue, job.id, { error: String(err) }).catch(() => {});
    }
  }

  private count(outcome: DispatchOutcome, claimed: ClaimedMessage[]): void {
    const { metrics, operator } = this.o;
    metrics.messagesFinal.inc({ operator, status: "success" }, outcome.succeeded.length);
    metrics.messagesFinal.inc({ operator, status: "failed" }, outcome.failed.length);
    const receivedAt = new Map(claimed.map((m) => [m.id, m.received_at.getTime()]));
    const now = Date.now();
    for (const s of outcome.succeeded) {
      const at = receivedAt.get(s.id);
      if (at !== undefined) metrics.dispatchLatency.observe({ operator }, (now - at) / 1000);
    }
  }

  private async submitAll(messages: ClaimedMessage[]): Promise<DispatchOutcome> {
    const outcome: DispatchOutcome = {
      acceptedParts: [],
      succeeded: [],
      failed: [],
      retry: [],
      deferred: [],
    };
    await Promise.all(messages.map((m) => this.submitMessage(m, outcome)));
    return outcome;
  }

  private async submitMessage(m: ClaimedMessage, outcome: DispatchOutcome): Promise<void> {
    const validitySeconds = (m.received_at.getTime() + this.o.validityHours * 3_600_000 - Date.now()) / 1000;
    const parts = buildSubmits({ ...m, validitySeconds }, this.o.link.session.settings);
    const todo = parts.filter((p) => !m.accepted_parts.includes(p.partNo));
    const results = await Promise.all(
      todo.map(async (p) => ({ partNo: p.partNo, result: await this.submitPart(p.params) })),
    );

    let accepted = m.accepted_parts.length;
    let permanent: string | null = null;
    let retryReason: string | null = null;
    for (const { partNo, result } of results) {
      const verdict = this.judge(result);
      if (verdict.kind === "accepted") {
        accepted++;
        outcome.acceptedParts.push({ messageId: m.id, partNo, smscId: verdict.smscId });
      } else if (verdict.kind === "failed") {
        permanent ??= verdict.response;
      } else {
        retryReason ??= verdict.reason;
      }
    }
    if (permanent)
      outcome.failed.push({ id: m.id, response: permanent, error: `carrier refused: ${permanent}` });
    else if (accepted === parts.length) outcome.succeeded.push({ id: m.id, response: "ESME_ROK" });
    else outcome.retry.push({ id: m.id, error: retryReason ?? "not all segments accepted" });
  }

  /**
   * Throttling answers are retried here at once: the session already pauses every submit while
   * the carrier throttles, so the part goes again as soon as the carrier is ready for it.
   */
  private async submitPart(params: SubmitParams): Promise<LinkOutcome> {
    let result = await this.submitCounted(params);
    for (let tries = 1; tries < THROTTLED_TRIES_IN_JOB && this.running; tries++) {
      if (result.kind !== "response" || actionFor(result.command_status) !== "backoff") break;
      result = await this.submitCounted(params);
    }
    return result;
  }

  private async submitCounted(params: SubmitParams): Promise<LinkOutcome> {
    const { metrics, operator } = this.o;
    const result = await this.o.link.submit(params);
    if (result.kind === "response") {
      metrics.submits.inc({ operator, status: statusName(result.command_status) });
      if (actionFor(result.command_status) === "backoff") metrics.throttled.inc({ operator });
    } else {
      metrics.submits.inc({ operator, status: `${result.kind}:${result.reason}` });
    }
    return result;
  }

  private judge(
    result: LinkOutcome,
  ):
    | { kind: "accepted"; smscId: string }
    | { kind: "failed"; response: string }
    | { kind: "retry"; reason: string } {
    if (result.kind === "not_sent") return { kind: "retry", reason: `not sent: ${result.reason}` };
    // On the wire with no answer: the carrier may have accepted it. SMPP cannot settle this
    // exactly once, so it is sent again (at least once; see the README's dispatch policy).
    if (result.kind === "unknown") return { kind: "retry", reason: `no response: ${result.reason}` };
    const action = actionFor(result.command_status);
    if (action === "ok") {
      // An id no receipt could ever match (empty, over 65 characters, not the configured
      // number format) leaves the segment's outcome unknown, exactly as a lost answer does.
      const id = readSubmitId(result.message_id, this.o.submitIdFormat);
      if (!id.ok) {
        this.o.metrics.smscIdsRefused.inc({ operator: this.o.operator, reason: id.reason });
        this.o.logger.warn(
          { operator: this.o.operator, message_id: result.message_id.slice(0, 80), reason: id.reason },
          "smsc message id refused",
        );
        return { kind: "retry", reason: `no usable message id: ${id.reason}` };
      }
      return { kind: "accepted", smscId: id.id };
    }
    if (action === "fail") return { kind: "failed", response: statusName(result.command_status) };
    return { kind: "retry", reason: describeStatus(result.command_status) };
  }
}

const NAMES = new Map(Object.entries(STATUS).map(([name, code]) => [code, name]));
const statusName = (code: number): string => NAMES.get(code) ?? `0x${code.toString(16).padStart(8, "0")}`;
