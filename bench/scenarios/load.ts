import autocannon from "autocannon";
import { round } from "../lib/report.ts";
import type { StepProgress } from "../report/progress.ts";

export type LoadOptions = autocannon.Options & ({ duration: number } | { amount: number });

/**
 * autocannon with the progress bar fed from its responses; resolves with its result and the wall
 * seconds it took (autocannon's own `duration` is whole seconds, too coarse for short runs).
 */
export function load(options: LoadOptions, progress: StepProgress, share: { from: number; to: number }) {
  return new Promise<autocannon.Result & { wallSeconds: number }>((resolve, reject) => {
    const started = performance.now();
    let responses = 0;
    const instance = autocannon({ timeout: 120, ...options }, (err: unknown, result) => {
      clearInterval(timer);
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve({ ...result, wallSeconds: (performance.now() - started) / 1000 });
    });
    instance.on("response", () => {
      responses++;
    });
    const timer = setInterval(() => {
      const seconds = (performance.now() - started) / 1000;
      const own =
        "amount" in options && options.amount
          ? responses / options.amount
          : seconds / ((options as { duration: number }).duration || 1);
      progress.update(share.from + (share.to - share.from) * own, `${round(responses / seconds, 0)} req/s`);
    }, 100);
  });
}

/** Failed requests of a run: transport errors, timeouts and non-2xx answers. */
export const failures = (r: autocannon.Result): number => r.errors + r.timeouts + r.non2xx;

export const latencyOf = (r: autocannon.Result) => ({
  p50: r.latency.p50,
  p90: r.latency.p90,
  p99: r.latency.p99,
  max: r.latency.max,
});
