/** What the bench and its load generator (load-generator.ts) tell each other over IPC. */
import { z } from "zod";

/**
 * The sender every bench sends from (verified on each bench account), and the whole-pipeline
 * scenario's text and first load recipient (bench/pipeline/run-pipeline.ts), which Kannel's run
 * (bench/peers/kannel-bench.ts) repeats. Here, not in dispatch-lib/harness.ts, so the Kannel
 * bench imports them without the database modules.
 */
export const SENDER = "BENCH";
export const MESSAGE = "Shiri bench: the whole pipeline.";
/** Recipient ranges (+26377 and seven digits): the probes take the ones below. */
export const FIRST_SUBSCRIBER = 1_000_000;
/** The warm-up's recipients (warm-up.ts), apart from the load's and the big request's (5,000,000 on). */
export const WARMUP_FIRST_SUBSCRIBER = 3_000_000;

export const loadPlanSchema = z.object({
  /** The API processes' base URLs: the requests and the connections are shared out over them. */
  bases: z.array(z.string().url()).min(1),
  /** Shiri's API key; for sendsms, the sendsms-user's password. */
  key: z.string().min(1),
  from: z.string().min(1),
  message: z.string().min(1),
  /**
   * single: POST /api/v1/sms, one recipient; bulk: POST /api/v1/sms/bulk, perRequest recipients;
   * sendsms: Kannel's GET /cgi-bin/sendsms, perRequest recipients (space-separated in `to`, as
   * Kannel's sendsms takes several; bench/peers/kannel-bench.ts).
   */
  mode: z.enum(["single", "bulk", "sendsms"]),
  requests: z.number().int().positive(),
  perRequest: z.number().int().positive(),
  inFlight: z.number().int().positive(),
  /** Recipients are +26377 and seven digits, counting up from here. */
  firstSubscriber: z.number().int().nonnegative(),
  /**
   * sendsms only: the sendsms-user's name, and where Kannel is to fetch each message's delivery
   * report (the request's id and send time are added to it).
   */
  sendsms: z
    .object({
      username: z.string().min(1),
      /** Absent: the load process's own receiver (`receiver: "dlr"`). */
      dlrUrl: z.string().url().optional(),
    })
    .optional(),
  /**
   * The callback receiver in the load process itself (callback-server.ts), as issue 27 measured:
   * "webhook" takes Shiri's signed webhook POSTs, "dlr" Kannel's dlr-url GETs. The process then
   * announces the receiver's URL, streams each arrival to the bench, sends its load only when
   * told to start, and stays up after its result until the bench stops it (late duplicates still
   * count). Absent: the bench receives the callbacks itself.
   */
  receiver: z.enum(["webhook", "dlr"]).optional(),
});
export type LoadPlan = z.infer<typeof loadPlanSchema>;

/** One accepted message: [message id, recipient, when its request was answered (wall ms)]. */
const acceptedMessage = z.tuple([z.string(), z.string(), z.number()]);
export type AcceptedMessage = z.infer<typeof acceptedMessage>;

/**
 * One callback as the load process's receiver took it: [event type (a Kannel report's %d),
 * message id (null when unreadable), arrival (wall ms), the request's send time from a dlr-url
 * (wall ms) or null].
 */
const arrival = z.tuple([z.string(), z.string().nullable(), z.number(), z.number().nullable()]);
export type Arrival = z.infer<typeof arrival>;

/** What the bench tells a load process with a receiver. */
export const loadControlSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("start") }),
  z.object({ type: z.literal("secret"), secret: z.string().nullable() }),
  z.object({ type: z.literal("reset") }),
]);
export type LoadControl = z.infer<typeof loadControlSchema>;

export const loadMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("progress"), responses: z.number() }),
  z.object({ type: z.literal("receiver"), url: z.string().url() }),
  z.object({
    type: z.literal("callbacks"),
    arrivals: z.array(arrival),
    /** Requests, bad signatures and unreadable bodies since the last such message. */
    requests: z.number(),
    badSignatures: z.number(),
    unreadable: z.number(),
  }),
  z.object({
    type: z.literal("result"),
    startedAtMs: z.number(),
    finishedAtMs: z.number(),
    requests: z.number(),
    /** Transport errors, timeouts and answers other than 202. */
    failed: z.number(),
    failureSamples: z.array(z.string()),
    latencyMs: z.object({
      p50: z.number(),
      p90: z.number(),
      p99: z.number(),
      max: z.number(),
      mean: z.number(),
    }),
    accepted: z.array(acceptedMessage),
    /** The load process's own CPU over the run, so its share of the machine is known. */
    cpuSeconds: z.number(),
  }),
]);
export type LoadMessage = z.infer<typeof loadMessageSchema>;
export type LoadResult = Extract<LoadMessage, { type: "result" }>;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between the bench's processes. */
export const wallMs = (): number => performance.timeOrigin + performance.now();

export const recipient = (subscriber: number): string => `+26377${String(subscriber).padStart(7, "0")}`;

/** A number as the SMSC sees it and as the API returns it, reduced to its digits. */
export const digits = (msisdn: string): string => msisdn.replace(/\D/g, "");

/**
 * Kannel's GET /cgi-bin/sendsms for one request to one or more recipients (space-separated in
 * `to`, which Kannel splits into one message each), path and query: "delivered" reports only
 * (dlr-mask=1), each fetched from dlrUrl with the message's recipient (Kannel's %p, which the
 * receiver reduces to its digits: the message's id here) and the request's send time (now), so
 * the receiver needs nothing else for each report's latency; Kannel fills in %d, the report's type.
 */
export function sendsmsPath(params: {
  username: string;
  password: string;
  from: string;
  to: readonly string[];
  text: string;
  dlrUrl: string;
}): string {
  const query = new URLSearchParams({
    username: params.username,
    password: params.password,
    from: params.from,
    to: params.to.join(" "),
    text: params.text,
    "dlr-mask": "1",
    "dlr-url": `${params.dlrUrl}?id=%p&sent=${wallMs()}&type=%d`,
  });
  return `/cgi-bin/sendsms?${query}`;
}
