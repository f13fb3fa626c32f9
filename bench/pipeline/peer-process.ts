import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { stopChild } from "../lib/shiri-process.ts";

/**
 * A bench peer (the SMPP sink, the load generator) in a node process of its own, run through tsx
 * with an IPC channel: it exits when the bench goes away (its "disconnect"), and stop() ends it by
 * its pid, SIGTERM then SIGKILL.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface PeerProcess {
  pid: number;
  child: ChildProcess;
  /** The last few kilobytes it wrote, for error reports. */
  output(): string;
  exited(): boolean;
  /** The first line it writes on stdout, parsed as JSON (peers announce their ports this way). */
  firstLine(timeoutMs: number): Promise<unknown>;
  stop(): Promise<void>;
}

export function startPeer(name: string, script: string, args: readonly string[]): PeerProcess {
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), [...args], {
    cwd: ROOT,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  if (child.pid === undefined) throw new Error(`could not start the ${name}`);
  let output = "";
  let stdout = "";
  const lineWaiters: Array<(line: string) => void> = [];
  child.stdout?.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    output = (output + text).slice(-8_000);
    stdout += text;
    const end = stdout.indexOf("\n");
    if (end >= 0) for (const w of lineWaiters.splice(0)) w(stdout.slice(0, end));
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8_000);
  });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    pid: child.pid,
    child,
    output: () => output,
    exited,
    firstLine(timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${name} said nothing in ${timeoutMs} ms:\n${output}`)),
          timeoutMs,
        );
        const onExit = () => reject(new Error(`${name} exited with ${child.exitCode}:\n${output}`));
        child.once("exit", onExit);
        const take = (line: string) => {
          clearTimeout(timer);
          child.off("exit", onExit);
          try {
            resolve(JSON.parse(line));
          } catch {
            reject(new Error(`${name} wrote ${line.slice(0, 200)}, not JSON`));
          }
        };
        const end = stdout.indexOf("\n");
        if (end >= 0) take(stdout.slice(0, end));
        else lineWaiters.push(take);
      });
    },
    stop: () => stopChild(child, 10_000),
  };
}
