import { getPriority, setPriority } from "node:os";
import type { Logger } from "../logger.ts";

/**
 * Gives a worker process the nice value WORKER_NICE, so that an API on the same machine has the
 * CPU first. Never lowers a nice value the process was started with (that needs privileges).
 * Linux keeps nice values per thread: this sets the main thread's, which runs all of Shiri's
 * JavaScript, and threads started after it inherit it.
 */
export function lowerWorkerPriority(nice: number, logger: Logger): void {
  const current = getPriority();
  if (nice <= current) return;
  try {
    setPriority(nice);
    logger.info({ nice }, "worker runs at a lower CPU priority than the API (WORKER_NICE)");
  } catch (err) {
    logger.warn({ err, nice }, "could not lower the worker's CPU priority; it runs at its usual one");
  }
}
