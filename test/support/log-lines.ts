import { Writable } from "node:stream";
import { createLogger } from "../../src/logger.ts";

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/**
 * A logger as the service makes it (src/logger.ts), its JSON lines read back as they are written.
 * `outage` tells a database out of reach, as src/cli/commands.ts passes it.
 */
export function loggedLines(outage: (err: unknown) => boolean) {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger("info", { destination: sink, outage }) };
}
