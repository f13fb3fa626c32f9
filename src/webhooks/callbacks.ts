import type { Config } from "../config.ts";
import { type Pool, withTransaction } from "../db/pool.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { LoopPace } from "../periodic.ts";
import { type Job, type Queue, statementsOn } from "../queue/boss.ts";
import {
  AWAKE_AFTER_WORK_MS,
  DISPATCH_LATER_TOPIC,
  IDLE_BACKSTOP_POLLS,
  localSignals,
  OUTBOX_TOPIC,
  type WorkSignals,
} from "../queue/wakeups.ts";
import {
  takeQueuedJobsOf,
  WEBHOOK_JOB_HEARTBEAT_SECONDS,
  WEBHOOK_QUEUE,
  type WebhookJob,
} from "../queue/webhook-jobs.ts";
import { type CallbackSettings, callbackSettings } from "./account-webhooks.ts";
import { resolverAt, systemResolve } from "./address-guard.ts";
import { callbackConnections } from "./callback-connections.ts";
import { HostCircuits, type HostOutcome } from "./host-circuits.ts";
import { stoppedUrls } from "./refusals.ts";
import { relayDueEvents } from "./relay.ts";
import type { RetryPolicy } from "./retry.ts";
import {
  type BatchContext,
  type EventRow,
  giveBack,
  LOAD_EVENTS,
  type StoppedUrls,
  sendCallbackBatch,
} from "./send-batch.ts";
import { requeueStrandedEvents } from "./stranded.ts";

export interface CallbackOptions {
  timeoutMs: number;
  /** Requests in flight per destination host, across all workers (pg-boss group concurrency). */
  concurrencyPerHost: number;
  /** Requests in flight in this process, all hosts together. */
  maxInFlight: number;
  /** Events per job, all for one host, sent one after another. */
  batchSize: number;
  /** Requests of a job written before their answers (1: no pipelining). */
  pipelineDepth: number;
  retry: RetryPolicy;
  /** After a rotation, the previous secret signs too for this long. */
  secretGraceMs: number;
  /** How often the relay loop looks for events whose job was lost (see stranded.ts). */
  strandedSweepMs: number;
  /** How often the loops look for events and jobs while awake (just after work). */
  pollMs: number;
  /** The due watch's poll (IDLE_POLL_MS): idle, the loops sleep until woken, and a dozen of these at most. */
  idlePollMs: number;
  allowPrivate: boolean;
  /** DNS servers for callbacks' names (WEBHOOK_DNS_SERVERS); the system's resolver when empty. */
  dnsServers: string[];
}

/** The advisory lock webhook fetches take one after another (any constant, the same in every process). */
const WEBHOOK_FETCH_LOCK = 7_426_023;

/** An open host's queued jobs returned to the outbox per timeout: a bounded transaction. */
const RETURN_JOBS_LIMIT = 200;
/** Events the relay moves into jobs per transaction. */
const RELAY_LIMIT = 1000;
/** Stranded events requeued per pass: a bounded statement; the next pass takes the rest. */
const STRANDED_CHUNK = 10_000;

/**
 * The webhook stage of a worker process: a relay loop that turns due outbox events into pg-boss
 * jobs (the API's events and retries; the worker's own are born in jobs), and a sending loop
 * that fetches those jobs and sends each one's events. Each request is bounded by its timeout,
 * each host's requests in flight by pg-boss group concurrency (a job sends one request at a
 * time) and the process's by maxInFlight; a fetch never waits for a request. A receiver that
 * hangs holds a few slots of its own host, never the loop, other hosts, sending or dispatch; once
 * one of its requests timed out, one slot of this process (host-circuits.ts).
 */
export function startCallbacks(deps: {
  pool: Pool;
  boss: Queue;
  logger: Logger;
  metrics: Metrics;
  options: CallbackOptions;
  /** Announcements of work: the idle loops sleep until theirs (none: they poll every idlePollMs). */
  signals?: WorkSignals;
}): { stop(): Promise<void> } {
  const { pool, boss, options } = deps;
  const logger = deps.logger.child({ stage: "webhooks" });
  const inFlight = new Set<Promise<void>>();
  const circuits = new HostCircuits();
  /** Hosts whose queued jobs are being returned to the outbox now. */
  const returning = new Set<string>();
  // Each loop polls just after work and, idle, sleeps until an announcement or the due watch's
  // wake (a retry come due, a lost announcement); the long idle wait is only a backstop.
  const timing = {
    busyMs: options.pollMs,
    idleMs: IDLE_BACKSTOP_POLLS * options.idlePollMs,
    awakeMs: AWAKE_AFTER_WORK_MS,
  };
  const relayPace = new LoopPace(timing);
  const sendPace = new LoopPace(timing);
  const signals = deps.signals ?? localSignals();
  const unsubscribe = [
    signals.on(OUTBOX_TOPIC, () => relayPace.wake()),
    signals.on(WEBHOOK_QUEUE, () => sendPace.wake()),
  ];
  // pg-boss's fetch and completion, as named statements on the service's pool.
  const onPool = statementsOn(pool);
  let stopped = false;
  const heartbeat = jobHeartbeat(
    (ids) => boss.touch(WEBHOOK_QUEUE, ids, { db: onPool }).then(() => {}),
    (err) => logger.warn({ err }, "webhook jobs' heartbeat failed; retrying"),
  );
  const ctx: BatchContext = {
    pool,
    logger,
    metrics: deps.metrics,
    post: {
      timeoutMs: options.timeoutMs,
      allowPrivate: options.allowPrivate,
      connections: callbackConnections({
        pipeliningStopped: (origin) => {
          deps.metrics.webhookPipeliningStopped.inc();
          logger.warn(
            { host: origin.host, port: origin.port },
            "callback receiver left pipelined requests unanswered: one request at a time to it for 10 minutes",
          );
        },
      }),
      resolve: options.dnsServers.length > 0 ? resolverAt(options.dnsServers) : systemResolve,
    },
    pipelineDepth: options.pipelineDepth,
    retry: options.retry,
    stopping: () => stopped,
    // A retry sooner than the due watch's next poll is then relayed on time.
    dueLater: () => signals.wake(DISPATCH_LATER_TOPIC),
  };

  async function relayLoop(): Promise<void> {
    // The first stranded sweep waits a full interval: at start-up every job is still fresh.
    let strandedSwept = Date.now();
    while (!stopped) {
      try {
        if (Date.now() - strandedSwept > options.strandedSweepMs) {
          strandedSwept = Date.now();
          const requeued = await requeueStrandedEvents(pool, { limit: STRANDED_CHUNK });
          if (requeued > 0) {
            deps.metrics.webhookRequeued.inc({ reason: "stranded" }, requeued);
            logger.warn({ requeued }, "webhook events whose job was lost put back in the outbox");
          }
        }
        const moved = await relayDueEvents(pool, boss, { limit: RELAY_LIMIT, batchSize: options.batchSize });
        if (moved > 0) {
          relayPace.worked();
          sendPace.wake();
        }
        if (moved === RELAY_LIMIT) continue; // a backlog: keep going without a pause
      } catch (err) {
        logger.error({ err }, "webhook relay failed; retrying");
        await relayPace.brief();
        continue;
      }
      await relayPace.next();
    }
  }

  async function sendLoop(): Promise<void> {
    while (!stopped) {
      const free = options.maxInFlight - inFlight.size;
      if (free <= 0) {
        await sendPace.brief();
        continue;
      }
      let started = 0;
      try {
        // Open hosts (a request of theirs timed out with no answer) stay out of the main fetch. A
        // fetch of one job first, which skips only those whose probe runs, gives each of them one
        // job at a time, in its turn among the others' even when the main fetch would fill the slots.
        if (circuits.wantsProbe()) started += await fetchAndStart(1, circuits.probing());
        if (free > started) started += await fetchAndStart(free - started, circuits.openHosts());
      } catch (err) {
        // Jobs fetched but not started expire and come back; the outbox guards against doubles.
        logger.error({ err }, "webhook fetch failed; retrying");
      }
      if (started > 0) sendPace.worked();
      else await sendPace.next();
    }
  }

  /**
   * Up to `count` jobs, at most concurrencyPerHost of one host active at once across every worker.
   * pg-boss counts a group's active jobs in the fetch's own snapshot, so two workers fetching at the
   * same moment each missed the other's and could together start twice the cap: fetches take a
   * transaction-scoped advisory lock first, so each one sees every earlier fetch's jobs (a fetch
   * takes a few milliseconds; the wait is that long).
   */
  async function fetchAndStart(count: number, ignoreHosts: string[]): Promise<number> {
    const jobs = await withTransaction(pool, async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock($1)", [WEBHOOK_FETCH_LOCK]);
      return boss.fetch<WebhookJob>(WEBHOOK_QUEUE, {
        // The fetch's text holds its count, and ignoring hosts makes another text of each: those
        // counts go in powers of two, so their named statements stay few (src/queue/boss.ts).
        batchSize: ignoreHosts.length > 0 ? 2 ** Math.floor(Math.log2(count)) : count,
        groupConcurrency: options.concurrencyPerHost,
        ...(ignoreHosts.length > 0 ? { ignoreGroups: ignoreHosts } : {}),
        db: statementsOn(tx),
      });
    });
    if (jobs.length > 0) await startJobs(jobs);
    return jobs.length;
  }

  async function startJobs(jobs: Job<WebhookJob>[]): Promise<void> {
    const ids = jobs.flatMap((j) => j.data.events.map((e) => e.id));
    const { rows } = await pool.query<EventRow>(LOAD_EVENTS, [ids]);
    const events = new Map(rows.map((r) => [r.id, r]));
    const accounts = [...new Set(rows.map((r) => r.account_id))];
    const settings = await callbackSettings(pool, accounts, options.secretGraceMs);
    const stopped = await stoppedUrls(pool, rows);
    for (const job of jobs) {
      const host = job.groupId ?? null;
      if (host !== null) circuits.started(host);
      const running = runJob(job, host, events, settings, stopped).finally(() => {
        inFlight.delete(running);
        sendPace.wake();
      });
      inFlight.add(running);
    }
  }

  async function runJob(
    job: Job<WebhookJob>,
    host: string | null,
    events: Map<string, EventRow>,
    settings: Map<string, CallbackSettings>,
    stopped: StoppedUrls,
  ): Promise<void> {
    heartbeat.running(job.id);
    // Neither answered nor timed out (nothing sent, or not recorded): the circuit stays as it was.
    let outcome: HostOutcome = { answered: false, timedOut: false };
    try {
      outcome = await sendCallbackBatch(ctx, job.data, events, settings, stopped);
      await boss.complete(WEBHOOK_QUEUE, job.id, null, { db: onPool });
    } catch (err) {
      // Left active and no longer touched, the job's heartbeat runs out and pg-boss runs it again;
      // the outbox skips what was recorded.
      logger.error({ err, job_id: job.id }, "webhook job could not be recorded");
    } finally {
      heartbeat.done(job.id);
      if (host !== null && circuits.finished(host, outcome)) {
        deps.metrics.webhookHostsHeld.inc();
        logger.warn(
          { host },
          "callback receiver did not answer in time: one batch at a time to it until it answers",
        );
      }
      if (host !== null && circuits.isOpen(host) && outcome.timedOut) await returnQueuedJobs(host);
    }
  }

  /**
   * An open host's jobs that wait in the queue, back to the outbox: else they would pile up, and
   * every fetch of every worker would read past them. They wait as long as the host has been held
   * (from WEBHOOK_RETRY_BASE_MS up to WEBHOOK_RETRY_MAX_DELAY_MS): a back-off of the host, not of
   * one event, since none of them was tried. Then their events come back in new jobs, each in its
   * turn for the probe. One return at a time for a host.
   */
  async function returnQueuedJobs(host: string): Promise<void> {
    if (returning.has(host)) return;
    returning.add(host);
    try {
      const wait = Math.min(options.retry.maxDelayMs, Math.max(options.retry.baseMs, circuits.heldFor(host)));
      const returned = await withTransaction(pool, async (tx) =>
        giveBack(tx, await takeQueuedJobsOf(tx, host, RETURN_JOBS_LIMIT), new Date(Date.now() + wait)),
      );
      if (returned > 0) {
        deps.metrics.webhookRequeued.inc({ reason: "host_held" }, returned);
        ctx.dueLater?.();
      }
    } catch (err) {
      // The jobs stay queued: the next timeout tries again.
      logger.warn({ err, host }, "a held host's queued callback jobs could not be returned to the outbox");
    } finally {
      returning.delete(host);
    }
  }

  const loops = Promise.all([relayLoop(), sendLoop()]);
  return {
    async stop() {
      stopped = true;
      for (const off of unsubscribe) off();
      relayPace.wake();
      sendPace.wake();
      await loops;
      // A stopping job sends no further event, so this waits for one request per job at most.
      await Promise.allSettled([...inFlight]);
      heartbeat.stop();
      ctx.post.connections.close();
    },
  };
}

/**
 * The heartbeat of the jobs this process runs: every third of WEBHOOK_JOB_HEARTBEAT_SECONDS, all
 * of them touched in one statement; no timer while none runs. A job whose worker died is then
 * failed by supervision within seconds, and its host's slot freed for the jobs waiting for it.
 */
export function jobHeartbeat(
  touch: (ids: string[]) => Promise<void>,
  onError: (err: unknown) => void,
): { running(id: string): void; done(id: string): void; stop(): void } {
  const ids = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
  };
  return {
    running(id) {
      ids.add(id);
      timer ??= setInterval(
        () => void touch([...ids]).catch(onError),
        (WEBHOOK_JOB_HEARTBEAT_SECONDS * 1_000) / 3,
      );
    },
    done(id) {
      ids.delete(id);
      if (ids.size === 0) stop();
    },
    stop,
  };
}

/** The callback settings from the service configuration. */
export function callbackOptions(config: Config): CallbackOptions {
  return {
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    concurrencyPerHost: config.WEBHOOK_CONCURRENCY_PER_HOST,
    maxInFlight: config.WEBHOOK_MAX_IN_FLIGHT,
    batchSize: config.WEBHOOK_BATCH_SIZE,
    pipelineDepth: config.WEBHOOK_PIPELINE_DEPTH,
    retry: {
      baseMs: config.WEBHOOK_RETRY_BASE_MS,
      maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS,
      windowMs: config.WEBHOOK_RETRY_HOURS * 3_600_000,
    },
    secretGraceMs: config.WEBHOOK_SECRET_GRACE_HOURS * 3_600_000,
    strandedSweepMs: config.WEBHOOK_STRANDED_SWEEP_MS,
    pollMs: config.WEBHOOK_POLL_MS,
    idlePollMs: config.IDLE_POLL_MS,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    dnsServers: config.WEBHOOK_DNS_SERVERS,
  };
}
