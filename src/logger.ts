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
];

export type Logger = pino.Logger;

/** JSON lines on stdout, or on stderr for the CLI, whose stdout carries its one JSON answer. */
export function createLogger(level: string, opts: { name?: string; stderr?: boolean } = {}): Logger {
  const options = { name: opts.name ?? "shiri", level, redact: { paths: REDACT, censor: "[redacted]" } };
  return opts.stderr ? pino(options, pino.destination(2)) : pino(options);
}
