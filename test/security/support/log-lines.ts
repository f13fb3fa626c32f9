import { createLogger, type Logger } from "../../../src/logger.ts";

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A logger whose lines a test reads back, and a way to wait for a line without sleeping. */
export function capturedLogger(level = "debug"): {
  logger: Logger;
  lines: LogLine[];
  next(msg: string): Promise<LogLine>;
} {
  const lines: LogLine[] = [];
  const waiting: Array<{ msg: string; resolve: (line: LogLine) => void }> = [];
  const logger = createLogger(level, {
    destination: {
      write(text: string) {
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        for (const w of waiting.filter((w) => w.msg === line.msg)) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve(line);
        }
      },
    },
  });
  return {
    logger,
    lines,
    next: (msg) => new Promise((resolve) => waiting.push({ msg, resolve })),
  };
}
