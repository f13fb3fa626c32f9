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

export function createLogger(level: string, name = "shiri"): Logger {
  return pino({ name, level, redact: { paths: REDACT, censor: "[redacted]" } });
}
