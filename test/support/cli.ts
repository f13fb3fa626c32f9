import { execFile } from "node:child_process";
import { expect } from "vitest";
import { SOURCES_BIN, shiriCommand } from "../../bench/lib/shiri-process.ts";

/**
 * The `shiri` CLI run for real (`node bin/shiri.mjs`), as an operator runs it: this checkout's
 * sources, or with SHIRI_UNDER_TEST=<dir> the compiled tree there, as the image runs it (see
 * shiriCommand). Each run costs a node start-up, so independent runs go in parallel, a few at a time.
 */
const CLI_TIMEOUT_MS = 30_000;
export const PARALLEL_RUNS = 4;
/** Each test runs the CLI several times, each a process start that takes seconds on a busy machine. */
export const CLI_TEST_TIMEOUT_MS = 180_000;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function shiri(
  url: string,
  args: readonly string[],
  opts: {
    timeoutMs?: number;
    env?: Record<string, string>;
    /** This checkout's sources, whatever is under test: for what only a development install has. */
    sources?: boolean;
  } = {},
): Promise<CliResult> {
  const command = opts.sources ? { bin: SOURCES_BIN, env: {} } : shiriCommand();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [command.bin, ...args],
      {
        timeout: opts.timeoutMs ?? CLI_TIMEOUT_MS,
        killSignal: "SIGKILL",
        env: {
          ...process.env,
          ...command.env,
          DATABASE_URL: url,
          LOG_LEVEL: "silent",
          NO_COLOR: "1",
          ...opts.env,
        },
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number") {
          // Not an exit status: the CLI could not be run, or it hung past the timeout.
          reject(new Error(`shiri ${args.join(" ")} failed to run: ${err.message}\n${stderr}`));
          return;
        }
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/** Runs tasks with at most `limit` in flight; results in input order. */
export async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** A successful run prints exactly one line of JSON, and exits 0. */
function oneJsonLine(res: CliResult): unknown {
  expect(res.code, res.stderr).toBe(0);
  expect(res.stderr).toBe("");
  const lines = res.stdout.split("\n");
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe("");
  return JSON.parse(lines[0] as string);
}

/** A successful run that prints one JSON object. */
export function oneJsonObject(res: CliResult): Record<string, unknown> {
  const parsed = oneJsonLine(res);
  expect(parsed).toBeTypeOf("object");
  expect(Array.isArray(parsed)).toBe(false);
  expect(parsed).not.toBeNull();
  return parsed as Record<string, unknown>;
}

/** A successful run that prints one JSON array of objects. */
export function oneJsonArray(res: CliResult): Array<Record<string, unknown>> {
  const parsed = oneJsonLine(res);
  expect(Array.isArray(parsed)).toBe(true);
  return parsed as Array<Record<string, unknown>>;
}

/** A failure: exit 1, nothing on stdout, one line on stderr (no usage text, no stack). */
export function failedWith(res: CliResult, message: RegExp, label = ""): void {
  expect(res.code, `${label} ${res.stderr}`).toBe(1);
  expect(res.stdout, label).toBe("");
  expect(res.stderr, label).toMatch(/^shiri: [^\n]+\n$/);
  expect(res.stderr, label).toMatch(message);
}

/** A usage error: exit 2, nothing on stdout, the message then the usage of `command` on stderr. */
export function usageError(res: CliResult, message: RegExp, command: string, label = ""): void {
  expect(res.code, `${label} ${res.stderr}`).toBe(2);
  expect(res.stdout, label).toBe("");
  expect(res.stderr, label).toMatch(/^shiri: [^\n]+\n\n/);
  expect(res.stderr, label).toMatch(message);
  expect(res.stderr, label).toContain(`usage: shiri ${command}`);
  expect(res.stderr.match(/usage: shiri/g), `${label}: that command's usage only`).toHaveLength(1);
  expect(res.stderr, `${label}: no stack trace`).not.toMatch(/\n\s+at /);
}
