import { isIP } from "node:net";
import path from "node:path";
import { z } from "zod";
import {
  CARRIERS,
  CONCATENATIONS,
  OPERATORS,
  type Operator,
  RECEIPT_SCOPES,
  SMSC_ID_FORMATS,
  type SmppSettings,
} from "../carriers/index.ts";
import { SMPP_DEFAULTS } from "../carriers/smpp-defaults.ts";
import { CHECKOUT_DIR } from "./checkout.ts";
import { isCidr } from "./cidr.ts";
import { presentEnv } from "./environment.ts";

/**
 * The one configuration object, read from the environment once. Every default runs:
 * with nothing set, Shiri starts an embedded Postgres and the carrier simulators.
 */
/**
 * Whole numbers are read in plain decimal digits: Number() alone would also take 0x50, 1e3 and
 * 0b1, which no operator means as a count or a port. Spaces around them are dropped, as Number()
 * dropped them (a CR left by an env file written on Windows). A leading "-" is let through to be
 * refused by the bound with the bound's own message.
 */
const WHOLE = /^-?[0-9]+$/;
const NOT_WHOLE = "expected a whole number in plain decimal digits (no 0x, no exponent)";
/** A whole number from `min` to `max`. */
const whole = (min: number, max: number = Number.MAX_SAFE_INTEGER) =>
  z.string().trim().regex(WHOLE, NOT_WHOLE).transform(Number).pipe(z.number().int().min(min).max(max));
const wholeFromEnv = (fallback: number, min: number, max?: number) => whole(min, max).default(fallback);
/** A count or a size that 0 would break (a dispatch job of no messages, a body limit of no bytes). */
const countFromEnv = (fallback: number, max?: number) => wholeFromEnv(fallback, 1, max);
/** The most a Postgres integer holds: the rate limits go to the database as integers. */
const MAX_PG_INTEGER = 2_147_483_647;
/** A limit a unit of time where 0 is documented as no limit, and the database holds it. */
const limitFromEnv = (fallback: number) => wholeFromEnv(fallback, 0, MAX_PG_INTEGER);
/** A TCP port; 0 (any free port) only where `min` is 0: the servers Shiri listens on. */
const portFromEnv = (fallback: number, min = 0) => wholeFromEnv(fallback, min, 65_535);
/** Node's timers hold at most 2^31 − 1 ms (some 24.8 days): a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;
/** A duration in milliseconds that a timer (or Postgres's timeouts, of the same bound) can hold. */
const msFromEnv = (fallback: number, min = 1) => wholeFromEnv(fallback, min, MAX_TIMER_MS);
/** A duration in seconds that a timer holds once in milliseconds: 2147483 s, some 24.8 days. */
const MAX_TIMER_SECONDS = Math.floor(MAX_TIMER_MS / 1000);
const secondsFromEnv = (fallback: number, min = 1) => wholeFromEnv(fallback, min, MAX_TIMER_SECONDS);
/** pg-boss refuses a job expiry or a supervise interval over 24 hours. */
const MAX_QUEUE_SECONDS = 86_400;
/**
 * Durations in hours and days are held to a hundred years: far past any use ("never" in practice,
 * as a test's 100000 hours), and well within what a Date (and Postgres's timestamps) hold once
 * added to now; 1e10 hours was not.
 */
const MAX_HOURS = 876_000;
const MAX_DAYS = 36_500;
/** Decimal digits with an optional fraction (0.001), again no exponent nor hex. */
const DECIMAL = /^-?([0-9]+(\.[0-9]+)?|\.[0-9]+)$/;
const NOT_DECIMAL = "expected a number in plain decimal digits, e.g. 24 or 0.5 (no exponent)";
/** Hours, fractions allowed: above 0 unless `zero` is a documented meaning ("none"). */
const hoursFromEnv = (fallback: number, zero = false) =>
  z
    .string()
    .trim()
    .regex(DECIMAL, NOT_DECIMAL)
    .transform(Number)
    .pipe(zero ? z.number().min(0).max(MAX_HOURS) : z.number().positive().max(MAX_HOURS))
    .default(fallback);
const daysFromEnv = (fallback: number) => wholeFromEnv(fallback, 1, MAX_DAYS);
/** An SMPP 3.4 field of one octet (a TON or an NPI). */
const octetFromEnv = (fallback: number) => wholeFromEnv(fallback, 0, 255);
/**
 * SMPP 3.4's bind fields as C-Octet Strings (5.2.1-5.2.3): 16, 9 and 13 octets with the closing
 * NUL. A longer one, or one outside printable ASCII, goes onto the wire as it is: an SMSC may
 * refuse or misread the bind. Warned of, not refused: a carrier that issued such credentials may
 * take them, and a deployment that binds with them today must keep starting.
 */
const SMPP_FIELD_LIMITS = { system_id: 15, password: 8, system_type: 12 } as const;

/** A line for each link's bind field SMPP 3.4 does not allow as it is written. */
function smppFieldWarnings(links: Record<string, SmppSettings>): string[] {
  const warnings: string[] = [];
  for (const [link, settings] of Object.entries(links))
    for (const [field, max] of Object.entries(SMPP_FIELD_LIMITS)) {
      const value = settings[field as keyof typeof SMPP_FIELD_LIMITS];
      const setting = `SMPP_${link.toUpperCase()}_${field.toUpperCase()}`;
      if (value.length > max)
        warnings.push(
          `${setting} has ${value.length} characters; SMPP 3.4 allows ${max}: it goes to the SMSC as it is, which may refuse the bind`,
        );
      else if (!/^[\x20-\x7e]*$/.test(value))
        warnings.push(`${setting} is not printable ASCII: the SMSC may read it otherwise than it is written`);
    }
  return warnings;
}
/** A comma-separated list, each entry trimmed and held to `check`; empty when unset. */
const commaList = (check: (entry: string) => boolean, message: string) =>
  z
    .string()
    .default("")
    .transform((list) =>
      list
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ""),
    )
    .pipe(z.array(z.string().refine(check, message)));
/**
 * A yes/no switch whose default depends on SHIRI_ENV, so it stays undefined until then. It takes
 * on/off as the other switches (RATE_LIMITS, SELF_VACUUM) do, and true/false/1/0 as it always has.
 */
const flagFromEnv = () =>
  z
    .enum(["on", "off", "true", "false", "1", "0"])
    .transform((v) => v === "on" || v === "true" || v === "1")
    .optional();

const envSchema = z.object({
  /** Production unless development is asked for (`npm start` and `npm run shiri` ask for it). */
  SHIRI_ENV: z.enum(["development", "production", "test"]).default("production"),
  HOST: z.string().min(1).default("0.0.0.0"),
  PORT: portFromEnv(3000),
  METRICS_PORT: portFromEnv(9464),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  DATABASE_URL: z
    .string()
    .url()
    .refine((url) => /^postgres(ql)?:\/\//i.test(url), "expected a postgres:// or postgresql:// URL")
    .optional(),
  // The checkout's own, wherever the command is run from; a path set here is read as any path is.
  DATA_DIR: z.string().min(1).default(path.join(CHECKOUT_DIR, ".data")),
  EMBEDDED_PG_PORT: portFromEnv(54329, 1),
  /**
   * Connections per process. Small on purpose: past about twice the database server's cores,
   * more backends only contend (on the 2-core bench machine 5 gave 2,100 sends/s, 20 gave 1,150–1,400).
   */
  PG_POOL_MAX: countFromEnv(5),
  /** A pooled connection beyond the first is closed after this long unused (docs/decisions/0011). */
  PG_POOL_IDLE_MS: msFromEnv(2_000),
  /** Per connection: longest statement, lock wait, idle open transaction, wait for a connection. */
  PG_STATEMENT_TIMEOUT_MS: msFromEnv(10_000),
  PG_LOCK_TIMEOUT_MS: msFromEnv(5_000),
  PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: msFromEnv(10_000),
  PG_CONNECT_TIMEOUT_MS: msFromEnv(5_000),
  // Unset: PG_STATEMENT_TIMEOUT_MS and 5 s more (databaseTimeouts, src/db/pool.ts).
  PG_READ_TIMEOUT_MS: whole(1, MAX_TIMER_MS).optional(),
  /** Idle keep-alive connections stay open this long: above common load balancers' 60 s idle timeout. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: msFromEnv(65_000),
  BODY_LIMIT_BYTES: countFromEnv(1_048_576),
  /** A batch send's (and a batch preview's) body limit: up to BULK_MAX_RECIPIENTS texts of their own. */
  BATCH_BODY_LIMIT_BYTES: countFromEnv(8_388_608),
  BULK_MAX_RECIPIENTS: countFromEnv(10_000),
  /** How often one number may appear in a bulk send (0: no cap; the contract bills repeats). */
  BULK_MAX_REPEATS: wholeFromEnv(0, 0),
  MAX_SEGMENTS: countFromEnv(10, 255),
  IDEMPOTENCY_TTL_HOURS: wholeFromEnv(24, 1, MAX_HOURS),
  /** The most messages one CSV export may cover (before its status and operator filters). */
  SEARCH_EXPORT_MAX_ROWS: countFromEnv(100_000),
  /** Final messages (with their parts) and mobile-originated messages are kept this many days, then deleted. */
  MESSAGE_RETENTION_DAYS: daysFromEnv(90),
  /** How often a worker looks for rows past their retention (one worker at a time deletes them). */
  RETENTION_INTERVAL_MS: msFromEnv(60_000),
  /** How often a worker runs the periodic audit (src/audit/audit-pass.ts; one worker at a time). */
  AUDIT_INTERVAL_MS: msFromEnv(300_000),
  /**
   * Rate limits, shared by every API process through Postgres (src/limits); an account may have
   * its own (`shiri rate-limit set`). 0 is no limit; RATE_LIMITS=off skips them altogether.
   */
  RATE_LIMITS: z.enum(["on", "off"]).default("on"),
  RATE_LIMIT_KEY_PER_SECOND: limitFromEnv(500),
  /** Failed authentications one client address may make a minute, over every API process (0: no limit). */
  AUTH_FAILURES_PER_MINUTE: limitFromEnv(60),
  /**
   * The load balancers in front of the API, addresses or CIDRs, comma-separated: a request from
   * one is judged by the client address it puts in X-Forwarded-For (src/intake/client-address.ts).
   * Empty, the default: the socket's peer is the client, and the header is never read.
   */
  TRUSTED_PROXIES: commaList(isCidr, "expected addresses or CIDRs, comma-separated"),
  RATE_LIMIT_ACCOUNT_PER_SECOND: limitFromEnv(1_000),
  RATE_LIMIT_RECIPIENTS_PER_MINUTE: limitFromEnv(600_000),
  /** How stale LastUsedAt may get before a request refreshes it; bounds writes on the hot path. */
  KEY_LAST_USED_PRECISION_SECONDS: secondsFromEnv(60, 0),
  /** Group commit: one account's sends written together, at most this many sends and messages. */
  SEND_COMMIT_MAX_SENDS: countFromEnv(200),
  SEND_COMMIT_MAX_MESSAGES: countFromEnv(2_000),
  /** Jobs carry this many message ids each, so a 10,000-recipient send is a few hundred jobs. */
  DISPATCH_BATCH_SIZE: countFromEnv(50),
  /** Hours a message may wait for its carrier; fractions allowed (0.001 is 3.6 s, for tests). */
  MESSAGE_VALIDITY_HOURS: hoursFromEnv(24),
  /**
   * The nice value a `--role worker` process gives itself at start (0: none). Where it shares a
   * machine with an API, the API then has the CPU first: its requests wait less, and the worker,
   * which runs less often, finds bigger batches that cost less a message
   * (docs/decisions/0022-workers-give-way-to-the-api.md).
   */
  WORKER_NICE: wholeFromEnv(5, 0, 19),
  /**
   * Dispatch's poll while awake: for a short while after work (what a send commits without an
   * announcement is found this way), and while waiting for room or for its link. Idle, a
   * dispatcher sleeps until work is announced or the due watch wakes it (docs/decisions/0011).
   * As long as the announcements' interval: a busy loop takes that much work a batch
   * (docs/decisions/0034-awake-loops-poll-at-the-announcement-pace.md).
   */
  DISPATCH_POLL_MS: msFromEnv(100, 0),
  /**
   * How often an idle worker's due watch (src/queue/due-watch.ts) looks at the dispatch and
   * callback queues and the webhook outbox: the longest an announcement lost without a reconnect
   * makes work wait. Jobs and events due by the clock (scheduled sends, retries) wake their loop on
   * time whatever this is.
   */
  IDLE_POLL_MS: msFromEnv(5_000),
  /** Messages one worker submits at once per operator, over all its batches (a TPS limit lowers it). */
  DISPATCH_MAX_IN_FLIGHT: countFromEnv(2_000),
  /**
   * Tries of a message that may put a segment on the wire and hear no answer; then it fails
   * NO_ANSWER (docs/dispatch.md, the in-flight window). 2: the handset may get it twice.
   */
  DISPATCH_MAX_UNANSWERED_SENDS: countFromEnv(2, 100),
  /**
   * Tries of a message the carrier may refuse with a status that can pass (ESME_RSUBMITFAIL, …);
   * the last refused fails it with that status (docs/dispatch.md). Throttling does not count.
   */
  DISPATCH_MAX_REFUSALS: countFromEnv(10, 1000),
  /** Dispatch batches in flight per operator: while one settles, the next is submitted. */
  DISPATCH_BATCHES_IN_FLIGHT: countFromEnv(3),
  /** Jobs one fetch takes at most; a batch is the work of every job fetched together. */
  DISPATCH_FETCH_JOBS: countFromEnv(500),
  /**
   * How long a batch holds the messages it is submitting without renewing the hold; it renews it
   * every third of this while it runs, so only a dead or cut-off worker lets it run out, and another
   * run may then take them.
   */
  DISPATCH_LOCK_SECONDS: secondsFromEnv(15),
  /**
   * A dispatch job whose batch has not touched it for this long lost its worker and is run again
   * (pg-boss's job heartbeat; at least 10). Batches touch their jobs as they renew their holds.
   */
  DISPATCH_JOB_HEARTBEAT_SECONDS: wholeFromEnv(10, 10, MAX_QUEUE_SECONDS),
  /** The longest a dispatch job may stay active however it is touched: a backstop, not the detector. */
  DISPATCH_JOB_EXPIRE_SECONDS: wholeFromEnv(3_600, 1, MAX_QUEUE_SECONDS),
  /**
   * Shiri vacuums its churned tables itself when the server's autovacuum is off ("auto"), always
   * ("on") or never ("off"); looked at every SELF_VACUUM_INTERVAL_MS by one worker at a time.
   */
  SELF_VACUUM: z.enum(["auto", "on", "off"]).default("auto"),
  SELF_VACUUM_INTERVAL_MS: msFromEnv(10_000),
  /** How often pg-boss looks for jobs whose heartbeat or expiry ran out (and its other upkeep). */
  QUEUE_SUPERVISE_SECONDS: wholeFromEnv(5, 1, MAX_QUEUE_SECONDS),
  BIND_LEASE_SECONDS: secondsFromEnv(15),
  BREAKER_ERROR_PERCENT: countFromEnv(50, 100),
  BREAKER_VOLUME_THRESHOLD: countFromEnv(10),
  BREAKER_RESET_MS: msFromEnv(5_000),
  BREAKER_WINDOW_MS: msFromEnv(10_000),
  /** A receipt matching no recorded segment waits this long before it counts as unknown. */
  RECEIPT_GRACE_SECONDS: secondsFromEnv(600),
  RECEIPT_SWEEP_MS: msFromEnv(500),
  /**
   * Inbound messages (src/inbound): a deliver_sm the same as one stored this recently is the SMSC
   * sending it again (its answer lost) and is stored once; a concatenated message whose parts are
   * not all there this long after its first becomes an incomplete message; the worker looks for
   * those (and for keyword replies left pending) every INBOUND_SWEEP_MS.
   */
  INBOUND_REPEAT_WINDOW_SECONDS: secondsFromEnv(600),
  INBOUND_REASSEMBLY_SECONDS: secondsFromEnv(300),
  INBOUND_SWEEP_MS: msFromEnv(5_000),
  /** Start the carrier simulators in the worker (default: yes, except in production). */
  START_SIMULATORS: flagFromEnv(),
  WEBHOOK_ALLOW_PRIVATE: flagFromEnv(),
  /** Each callback request, from connecting to the status line. */
  WEBHOOK_TIMEOUT_MS: msFromEnv(5_000),
  /** Callback requests in flight per destination host, across all workers. */
  WEBHOOK_CONCURRENCY_PER_HOST: countFromEnv(64),
  /** Callback requests in flight per worker process, all hosts together. */
  WEBHOOK_MAX_IN_FLIGHT: countFromEnv(256),
  /** Events per callback job, all for one host, sent one after another. */
  WEBHOOK_BATCH_SIZE: countFromEnv(100),
  /**
   * Requests of a callback job written on its connection before their answers (HTTP/1.1
   * pipelining, in order; 1: none). A receiver that closes with requests unanswered is sent one
   * at a time for a while (docs/decisions/0030).
   */
  WEBHOOK_PIPELINE_DEPTH: countFromEnv(1, 64),
  /** Retries: exponential from the base delay with jitter, capped, for this many hours after the event. */
  WEBHOOK_RETRY_HOURS: hoursFromEnv(24),
  WEBHOOK_RETRY_BASE_MS: msFromEnv(10_000),
  WEBHOOK_RETRY_MAX_DELAY_MS: msFromEnv(3_600_000),
  /** The webhook loops' poll while awake (see DISPATCH_POLL_MS; idle, they sleep until woken). */
  WEBHOOK_POLL_MS: msFromEnv(200),
  /** Delivered and failed webhook events are kept this many days, then deleted. */
  WEBHOOK_RETENTION_DAYS: daysFromEnv(30),
  /** After a rotation, callbacks carry the old secret's signature too for this many hours (0: none). */
  WEBHOOK_SECRET_GRACE_HOURS: hoursFromEnv(24, true),
  /** How often a worker looks for pending events whose callback job was lost or used up its retries. */
  WEBHOOK_STRANDED_SWEEP_MS: msFromEnv(60_000),
  // --- Callbacks that cannot be turned on a stranger; upgrades that do not stop sending (issue 28).
  /** Events one account may redeliver per hour, all processes together (0: no limit). */
  WEBHOOK_REDELIVERIES_PER_HOUR: limitFromEnv(10_000),
  /** DNS servers for callbacks' names (IP addresses, each with an optional :port); the system's resolver when empty. */
  WEBHOOK_DNS_SERVERS: commaList(
    isDnsServer,
    "expected IP addresses, each with an optional :port, comma-separated",
  ),
  /** Longest a migration waits for a lock that holds off traffic while it waits, per try. */
  MIGRATION_LOCK_TIMEOUT_MS: msFromEnv(2_000),
  /** Tries per migration (or per statement of one run outside a transaction) before start-up fails. */
  MIGRATION_LOCK_ATTEMPTS: countFromEnv(10),
});

export type Env = z.infer<typeof envSchema>;

/**
 * Names a setting had before it was renamed, still read when the new name is unset (the new one
 * wins when both are set; docs/configuration.md, aliases). Each is held to its new name's bounds.
 */
const aliasSchema = z.object({
  /** Now RATE_LIMIT_KEY_PER_SECOND: the same requests a second per key. */
  RATE_LIMIT_KEY_REQUESTS_PER_SECOND: whole(0, MAX_PG_INTEGER).optional(),
  /** Now RATE_LIMIT_ACCOUNT_PER_SECOND: the same requests a second per account. */
  RATE_LIMIT_ACCOUNT_REQUESTS_PER_SECOND: whole(0, MAX_PG_INTEGER).optional(),
  /**
   * Now DISPATCH_MAX_IN_FLIGHT: dispatch jobs of up to DISPATCH_BATCH_SIZE messages each in flight
   * per operator, so it counts DISPATCH_JOBS_IN_FLIGHT × DISPATCH_BATCH_SIZE messages.
   */
  DISPATCH_JOBS_IN_FLIGHT: whole(1, 1_000_000).optional(),
});

function withAliases(env: NodeJS.ProcessEnv, settings: Env, old: z.infer<typeof aliasSchema>): Env {
  const out = { ...settings };
  if (env.RATE_LIMIT_KEY_PER_SECOND === undefined && old.RATE_LIMIT_KEY_REQUESTS_PER_SECOND !== undefined)
    out.RATE_LIMIT_KEY_PER_SECOND = old.RATE_LIMIT_KEY_REQUESTS_PER_SECOND;
  if (
    env.RATE_LIMIT_ACCOUNT_PER_SECOND === undefined &&
    old.RATE_LIMIT_ACCOUNT_REQUESTS_PER_SECOND !== undefined
  )
    out.RATE_LIMIT_ACCOUNT_PER_SECOND = old.RATE_LIMIT_ACCOUNT_REQUESTS_PER_SECOND;
  if (env.DISPATCH_MAX_IN_FLIGHT === undefined && old.DISPATCH_JOBS_IN_FLIGHT !== undefined)
    out.DISPATCH_MAX_IN_FLIGHT = old.DISPATCH_JOBS_IN_FLIGHT * out.DISPATCH_BATCH_SIZE;
  return out;
}

export interface Config extends Omit<Env, "WEBHOOK_ALLOW_PRIVATE" | "START_SIMULATORS"> {
  START_SIMULATORS: boolean;
  /** Callbacks to loopback and private ranges: allowed in development, refused in production. */
  WEBHOOK_ALLOW_PRIVATE: boolean;
  /** Each link (one SMPP account) by name, in SMPP_LINKS order. */
  links: Record<string, SmppSettings>;
  /** Each operator's links, in the order they are tried (ROUTE_<OPERATOR>). */
  routes: Record<Operator, string[]>;
  /** Links' SMPP_<LINK>_PASSWORD given as the empty string (read as unset): a refusal says so. */
  emptyPasswords: readonly string[];
  /** SMPP_* variables no link reads, a line each, for the start to warn of (unreadSmppSettings). */
  unreadSettings: readonly string[];
}

/** A DNS server as Node's resolver takes it: an IP address, "a.b.c.d:port" or "[v6]:port". */
function isDnsServer(entry: string): boolean {
  const withPort = /^\[([^\]]+)\]:(\d{1,5})$/.exec(entry) ?? /^([^:]+):(\d{1,5})$/.exec(entry);
  if (!withPort) return isIP(entry) !== 0;
  return isIP(withPort[1] ?? "") !== 0 && Number(withPort[2]) <= 65_535;
}

/** A link's name: it is also the SMPP_<LINK>_ prefix of its settings. */
const LINK_NAME = /^[a-z][a-z0-9_]{0,31}$/;
const DEFAULT_LINKS = OPERATORS.join(",");

/** A comma-separated list of link names, or the setting's name in the error. */
function linkNames(setting: string, value: string): string[] {
  const names = value
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n.length > 0);
  const bad = names.find((n) => !LINK_NAME.test(n));
  if (bad !== undefined || names.length === 0)
    throw new ConfigError(
      `invalid configuration:\n  ${setting}: expected link names (a-z, 0-9, _), comma-separated; got "${value}"`,
    );
  return [...new Set(names)];
}

/**
 * The links: SMPP_LINKS names them (by default one per operator, named after it) and each field
 * of one is SMPP_<LINK>_<FIELD>, e.g. SMPP_ECONET_PORT. A link named after an operator starts from
 * that operator's settings (carriers/<operator>.ts), any other from plain SMPP 3.4 defaults.
 */
function linkSettings(env: NodeJS.ProcessEnv): Record<string, SmppSettings> {
  const out: Record<string, SmppSettings> = {};
  for (const link of linkNames("SMPP_LINKS", env.SMPP_LINKS ?? DEFAULT_LINKS)) {
    const base: SmppSettings = (OPERATORS as readonly string[]).includes(link)
      ? CARRIERS[link as Operator].smpp
      : { ...SMPP_DEFAULTS, port: 2775, password: "" };
    const prefix = `SMPP_${link.toUpperCase()}_`;
    const shape = z.object({
      host: z.string().min(1).default(base.host),
      port: portFromEnv(base.port, 1),
      // Longer than SMPP 3.4 allows is warned of at start (SMPP_FIELD_LIMITS).
      system_id: z.string().default(base.system_id),
      password: z.string().default(base.password),
      system_type: z.string().default(base.system_type),
      bind_mode: z.literal("transceiver").default(base.bind_mode),
      window_size: countFromEnv(base.window_size),
      // 0: no TPS limit of Shiri's own (the carrier may still throttle).
      tps_limit: wholeFromEnv(base.tps_limit, 0),
      max_binds: countFromEnv(base.max_binds),
      enquire_link_interval_ms: msFromEnv(base.enquire_link_interval_ms),
      response_timeout_ms: msFromEnv(base.response_timeout_ms),
      source_addr_ton: octetFromEnv(base.source_addr_ton),
      source_addr_npi: octetFromEnv(base.source_addr_npi),
      dest_addr_ton: octetFromEnv(base.dest_addr_ton),
      dest_addr_npi: octetFromEnv(base.dest_addr_npi),
      // The carrier's dialect: overrides of plain SMPP 3.4 (docs/carriers.md).
      numeric_source_addr_ton: octetFromEnv(base.numeric_source_addr_ton),
      numeric_source_addr_npi: octetFromEnv(base.numeric_source_addr_npi),
      id_format_submit: z.enum(SMSC_ID_FORMATS).default(base.id_format_submit),
      id_format_receipt: z.enum(SMSC_ID_FORMATS).default(base.id_format_receipt),
      gsm_data_coding: z
        .enum(["0", "1"])
        .transform((v) => (v === "1" ? 1 : 0))
        .default(base.gsm_data_coding),
      concatenation: z.enum(CONCATENATIONS).default(base.concatenation),
      receipt_scope: z.enum(RECEIPT_SCOPES).default(base.receipt_scope),
    });
    const names = Object.keys(shape.shape).map((key) => prefix + key.toUpperCase());
    refuseBlank(env, names);
    const raw: Record<string, string | undefined> = {};
    for (const key of Object.keys(shape.shape)) raw[key] = env[prefix + key.toUpperCase()];
    const parsed = shape.safeParse(raw);
    if (!parsed.success) {
      const lines = parsed.error.issues.map(
        (i) => `  ${prefix}${i.path.join(".").toUpperCase()}: ${i.message}`,
      );
      throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
    }
    out[link] = parsed.data;
  }
  return out;
}

/**
 * SMPP_* variables no link reads, a line each: the settings of a link not in SMPP_LINKS, or a name
 * misspelt. Warned of at start, not refused: env and compose files often carry every operator's
 * settings while SMPP_LINKS names fewer links, and taking a link out of SMPP_LINKS must not need
 * its settings deleted too. A misspelt password is still refused in production (the simulator's
 * would be used).
 */
function unreadSmppSettings(env: NodeJS.ProcessEnv, links: Record<string, SmppSettings>): string[] {
  const linkList = Object.keys(links).join(",");
  // Longest first: NUMERIC_SOURCE_ADDR_TON before SOURCE_ADDR_TON.
  const fields = Object.keys(Object.values(links)[0] ?? {})
    .map((field) => field.toUpperCase())
    .sort((a, b) => b.length - a.length);
  const read = new Set(["SMPP_LINKS"]);
  for (const link of Object.keys(links))
    for (const field of fields) read.add(`SMPP_${link.toUpperCase()}_${field}`);
  const lines: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith("SMPP_") || read.has(name)) continue;
    const known = Object.keys(links).find((link) => name.startsWith(`SMPP_${link.toUpperCase()}_`));
    const field = fields.find((f) => name.endsWith(`_${f}`) && name.length > `SMPP__${f}`.length);
    if (known !== undefined)
      lines.push(
        `${name} is not read: link ${known} has no setting ${name.slice(`SMPP_${known}_`.length)} (see docs/configuration.md)`,
      );
    else if (field !== undefined)
      lines.push(
        `${name} is not read: no link named ${name.slice(5, -field.length - 1).toLowerCase()} in SMPP_LINKS (${linkList})`,
      );
    else lines.push(`${name} is not read: no setting has that name (a link's are SMPP_<LINK>_<FIELD>)`);
  }
  return lines;
}

/** ROUTE_<OPERATOR>: the operator's links in order; by default the link named after it. */
function routeSettings(
  env: NodeJS.ProcessEnv,
  links: Record<string, SmppSettings>,
): Record<Operator, string[]> {
  const out = {} as Record<Operator, string[]>;
  // Every route that names no link is told at once, not one a start.
  const problems: string[] = [];
  for (const op of OPERATORS) {
    const setting = `ROUTE_${op.toUpperCase()}`;
    const route = linkNames(setting, env[setting] ?? op);
    const unknown = route.filter((l) => !Object.hasOwn(links, l));
    if (unknown.length > 0)
      problems.push(
        `  ${setting}: no link named ${unknown.join(", ")} (SMPP_LINKS is ${Object.keys(links).join(",")})`,
      );
    out[op] = route;
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n${problems.join("\n")}`);
  return out;
}

export class ConfigError extends Error {}

/**
 * A setting of spaces alone is refused, naming it: a number would read it as 0 (PORT as any free
 * port) and a name as spaces. Only the empty string counts as unset (src/environment.ts).
 */
function refuseBlank(env: NodeJS.ProcessEnv, names: readonly string[]): void {
  const blank = names.filter((name) => env[name] !== undefined && env[name]?.trim() === "");
  if (blank.length > 0)
    throw new ConfigError(
      `invalid configuration:\n${blank.map((name) => `  ${name}: is only spaces (leave it empty for the default)`).join("\n")}`,
    );
}

/** The passwords the carrier simulators expect: never a real carrier's. */
const SIMULATOR_PASSWORDS: ReadonlySet<string> = new Set(OPERATORS.map((op) => CARRIERS[op].smpp.password));

/** The embedded Postgres is a development convenience: production never falls back to it. */
export const EMBEDDED_IN_PRODUCTION =
  "DATABASE_URL is unset and SHIRI_ENV is production (the default): production never starts an embedded Postgres; SHIRI_ENV=development does (npm start and npm run shiri set it)";

/**
 * What production refuses to start a worker with, in one line naming the setting: the carrier
 * simulators, or a link whose password is empty or the simulator's (an empty setting counts as
 * unset, which used to fall back to the simulator's). Null when nothing is wrong, and outside
 * production.
 */
export function productionRefusal(config: Config): string | null {
  if (config.SHIRI_ENV !== "production") return null;
  if (config.START_SIMULATORS)
    return "START_SIMULATORS is on: production never starts the carrier simulators (set SHIRI_ENV=development for them)";
  for (const [link, settings] of Object.entries(config.links)) {
    const setting = `SMPP_${link.toUpperCase()}_PASSWORD`;
    if (settings.password === "") return `${setting} is empty: production needs the link's real password`;
    // Set to the empty string, it reads as unset, and unset is the simulator's password.
    if (SIMULATOR_PASSWORDS.has(settings.password))
      return config.emptyPasswords.includes(setting)
        ? `${setting} is set but empty, which leaves the carrier simulator's password: production needs the link's real password`
        : `${setting} is the carrier simulator's password: production needs the link's real password`;
  }
  return null;
}

/**
 * What production starts with but an operator should know, a line each: documented overrides that
 * undo a protection. Empty outside production.
 */
export function productionWarnings(config: Config): string[] {
  if (config.SHIRI_ENV !== "production") return [];
  const warnings: string[] = [];
  if (config.WEBHOOK_ALLOW_PRIVATE)
    warnings.push("WEBHOOK_ALLOW_PRIVATE is on: callbacks may be sent to private and loopback addresses");
  const everyone = config.TRUSTED_PROXIES.filter((cidr) => /\/0$/.test(cidr));
  if (everyone.length > 0)
    warnings.push(
      `TRUSTED_PROXIES holds ${everyone.join(", ")}: any client may name its own address in X-Forwarded-For, past keys' allowed_ips and the failed-authentication limit`,
    );
  return warnings;
}

/**
 * What a start warns of, a line each: SMPP settings no link reads, bind fields SMPP 3.4 does not
 * allow as written, then production's warnings.
 */
export function startWarnings(config: Config): string[] {
  return [
    ...config.unreadSettings,
    ...smppFieldWarnings(config.links),
    ...productionWarnings(config),
    ...timeoutWarnings(config),
  ];
}

/** A read limit the server's statement timeout does not fit in gives up on statements it would let run. */
function timeoutWarnings(config: Pick<Config, "PG_READ_TIMEOUT_MS" | "PG_STATEMENT_TIMEOUT_MS">): string[] {
  const read = config.PG_READ_TIMEOUT_MS;
  return read !== undefined && read <= config.PG_STATEMENT_TIMEOUT_MS
    ? [
        `PG_READ_TIMEOUT_MS=${read} is not above PG_STATEMENT_TIMEOUT_MS=${config.PG_STATEMENT_TIMEOUT_MS}: a statement the server lets run that long loses its connection first; set it a few seconds above`,
      ]
    : [];
}

export function loadConfig(given: NodeJS.ProcessEnv = process.env): Config {
  const env = presentEnv(given);
  refuseBlank(env, [...Object.keys(envSchema.shape), ...Object.keys(aliasSchema.shape)]);
  const parsed = envSchema.safeParse(env);
  const old = aliasSchema.safeParse(env);
  if (!parsed.success || !old.success) {
    const issues = [...(parsed.error?.issues ?? []), ...(old.error?.issues ?? [])];
    const lines = issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
  }
  const { WEBHOOK_ALLOW_PRIVATE, START_SIMULATORS, ...rest } = withAliases(env, parsed.data, old.data);
  const production = rest.SHIRI_ENV === "production";
  const links = linkSettings(env);
  return {
    ...rest,
    WEBHOOK_ALLOW_PRIVATE: WEBHOOK_ALLOW_PRIVATE ?? !production,
    START_SIMULATORS: START_SIMULATORS ?? !production,
    links,
    routes: routeSettings(env, links),
    emptyPasswords: Object.keys(links)
      .map((link) => `SMPP_${link.toUpperCase()}_PASSWORD`)
      .filter((name) => given[name] === ""),
    unreadSettings: unreadSmppSettings(env, links),
  };
}
