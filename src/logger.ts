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
 * to the given stream, which is how a test reads what the service would have logged).
 */
export function createLogger(
  level: string,
  opts: { name?: string; stderr?: boolean; destination?: pino.DestinationStream } = {},
): Logger {
  const options = { name: opts.name ?? "shiri", level, redact: { paths: REDACT, censor: "[redacted]" } };
  const destination = opts.destination ?? (opts.stderr ? pino.destination(2) : undefined);
  return destination ? pino(options, destination) : pino(options);
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

/**
 * A request's URL for logs: the path without its query (a search's `to`, an export's filters), and
 * any path segment but a UUID that holds a run of digits (a number in `/opt-outs/{number}`) shown
 * only by its length. The query's parameter names stay: they say what was asked, not of whom.
 */
export function urlForLog(url: string): string {
  const [path = "", query] = url.split("?", 2);
  const segments = path
    .split("/")
    .map((segment) =>
      UUID.test(segment) || !DIGIT_RUN.test(decodeSafely(segment)) ? segment : `…(${segment.length})`,
    );
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
