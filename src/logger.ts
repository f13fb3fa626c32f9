import { pino } from "pino";

/** Everything that could carry a secret is redacted wherever it appears in a log line. */
const REDACT = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "authorization",
  "token",
  "api_key",
  "password",
  "*.password",
  "*.token",
  "*.api_key",
  "secret",
  "*.secret",
  // A Postgres error's detail can quote a whole row ("Failing row contains (…)": number and
  // text included); a body-parser error carries the body it could not parse.
  "err.detail",
  "err.body",
  "*.err.detail",
  "*.err.body",
];

export type Logger = pino.Logger;

/**
 * JSON lines on stdout, or on stderr for the CLI, whose stdout carries its one JSON answer (or
 * to the given stream, which is how a test reads what the service would have logged). With
 * `outage`, which tells an error that means the database is out of reach, an outage is told in
 * a few lines rather than by every loop at every try (outageLines).
 */
export function createLogger(
  level: string,
  opts: {
    name?: string;
    stderr?: boolean;
    destination?: pino.DestinationStream;
    outage?: (err: unknown) => boolean;
  } = {},
): Logger {
  const quiet = opts.outage ? outageLines(opts.outage, () => logger) : undefined;
  const options: pino.LoggerOptions = {
    name: opts.name ?? "shiri",
    level,
    redact: { paths: REDACT, censor: "[redacted]" },
    ...(quiet ? { hooks: { logMethod: quiet } } : {}),
  };
  const destination = opts.destination ?? (opts.stderr ? pino.destination(2) : undefined);
  const logger = destination ? pino(options, destination) : pino(options);
  return logger;
}

/** How long without a line of the outage before it is said to be over. */
export const OUTAGE_OVER_AFTER_MS = 10_000;

type LogMethod = NonNullable<NonNullable<pino.LoggerOptions["hooks"]>["logMethod"]>;

/**
 * While the database is out of reach, every loop of a worker fails at every try, and says so:
 * some 250 lines in 40 s, most with a stack. The first warning or error whose `err` is such a
 * failure is logged, with a line saying that the next ones are counted; those are held back
 * until none has come for OUTAGE_OVER_AFTER_MS, when one line gives how long it lasted (from its
 * first failure to its last: the quiet wait after the last is not the outage's) and how many of
 * each were held back. Every other line goes out as ever.
 */
function outageLines(isOutage: (err: unknown) => boolean, root: () => pino.Logger): LogMethod {
  let outage: { since: number; last: number; held: Map<string, number>; timer: NodeJS.Timeout } | null = null;
  const over = () => {
    if (!outage) return;
    const { since, last, held } = outage;
    outage = null;
    root().warn(
      { outage_ms: last - since, held_back: Object.fromEntries(held) },
      "database failures stopped: the lines held back meanwhile, by message",
    );
  };
  return function logMethod(this: pino.Logger, args, method, level) {
    const [first, message] = args as unknown[];
    const err = typeof first === "object" && first !== null ? (first as { err?: unknown }).err : undefined;
    if (level < 40 || err === undefined || !isOutage(err)) return method.apply(this, args);
    if (outage) {
      const key = typeof message === "string" ? message : "(no message)";
      outage.held.set(key, (outage.held.get(key) ?? 0) + 1);
      outage.last = Date.now();
      outage.timer.refresh();
      return;
    }
    method.apply(this, args);
    const now = Date.now();
    outage = { since: now, last: now, held: new Map(), timer: setTimeout(over, OUTAGE_OVER_AFTER_MS) };
    outage.timer.unref();
    root().warn("the database is out of reach: further failures are counted, not logged, until it answers");
  };
}

/**
 * Logs carry no phone numbers and no message text, at any level. A number is cut to its first
 * characters (country code and operator prefix), enough to tell where it routes.
 */
export function numberForLog(msisdn: string | undefined): string {
  if (!msisdn) return "";
  return msisdn.length > 6 ? `${msisdn.slice(0, 6)}…(${msisdn.length})` : "…";
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DIGIT_RUN = /\d{5,}/;
/** Longer than any word of a route: a key or a secret pasted into the path by mistake. */
const LONGEST_WORD = 32;

/**
 * A request's URL for logs: the path without its query (a search's `to`, an export's filters), and
 * any path segment but a UUID that holds a run of digits (a number in `/opt-outs/{number}`) or is
 * longer than a route's words (an API key pasted into the path) shown only by its length. The
 * query's parameter names stay: they say what was asked, not of whom.
 */
export function urlForLog(url: string): string {
  const [path = "", query] = url.split("?", 2);
  const segments = path.split("/").map((segment) => {
    if (UUID.test(segment)) return segment;
    const decoded = decodeSafely(segment);
    return DIGIT_RUN.test(decoded) || decoded.length > LONGEST_WORD ? `…(${segment.length})` : segment;
  });
  const names = query
    ? [...new URLSearchParams(query).keys()].filter((name) => /^[a-z_]{1,32}$/.test(name))
    : [];
  return (
    segments.join("/") + (names.length > 0 ? `?${[...new Set(names)].map((n) => `${n}=…`).join("&")}` : "")
  );
}

function decodeSafely(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * A delivery receipt's text for logs: its fields up to `text:`, which quotes the start of the
 * message. Without that field nothing says where the message text is, so only its length shows.
 */
export function receiptForLog(text: string | undefined): string {
  if (!text) return "";
  const at = text.search(/\btext:/i);
  return at >= 0 ? `${text.slice(0, at)}text:…` : `…(${text.length} characters, no text: field)`;
}
