import { startPeer } from "../pipeline/peer-process.ts";
import {
  type LoadPlan,
  type LoadResult,
  loadMessageSchema,
  WARMUP_FIRST_SUBSCRIBER,
} from "./load-protocol.ts";

/**
 * Traffic through a system before its measured run (docs/decisions/0031-peers-compared-warm.md):
 * a process measured from its first request also pays for starting up (V8 compiling the hot
 * code, Postgres planning statements and filling its caches), which a gateway in service paid
 * once, long before. The warm-up goes through the measured run's own path: a load generator of
 * its own with the run's plan (endpoint, request size, requests in flight), to recipients of its
 * own, and ends when every message it got accepted was called back. The caller then resets the
 * sink's and the receiver's counts, and leaves the warm-up's ids out of the completeness check.
 */

/** The warm-up's messages for a measured run of `measured`: half, as the peers comparison runs it. */
export const warmUpFor = (measured: number): number => Math.ceil(measured / 2);

const WARMUP_TIMEOUT_MS = 300_000;

/**
 * Sends `messages` (none: nothing to do) as `plan` would (callbacks to `dlrUrl` for Kannel's sendsms, to the account
 * webhook for Shiri), waits until `calledBack` says each accepted one came back, and answers
 * their ids. Throws if a request failed or the callbacks do not come within five minutes.
 */
export async function warmUp(options: {
  plan: LoadPlan;
  messages: number;
  /** Kannel's sendsms: where its delivery reports go (the measured run's receiver). */
  dlrUrl?: string;
  calledBack: (id: string) => boolean;
  /** Throws when a process of the system under test is gone. */
  alive: () => void;
}): Promise<string[]> {
  const { plan, dlrUrl } = options;
  if (options.messages === 0) return [];
  const warmPlan: LoadPlan = {
    ...plan,
    requests: Math.ceil(options.messages / plan.perRequest),
    firstSubscriber: WARMUP_FIRST_SUBSCRIBER,
    ...(plan.sendsms && dlrUrl ? { sendsms: { ...plan.sendsms, dlrUrl } } : {}),
    // Without a receiver of its own, it sends at once and exits after its result.
    receiver: undefined,
  };
  const load = startPeer("warm-up load generator", "../peers/load-generator.ts", [JSON.stringify(warmPlan)]);
  try {
    // Set from the IPC listener: a holder, so the loop below reads it fresh.
    const state: { result: LoadResult | null } = { result: null };
    load.child.on("message", (raw: unknown) => {
      const message = loadMessageSchema.parse(raw);
      if (message.type === "result") state.result = message;
    });
    const deadline = performance.now() + WARMUP_TIMEOUT_MS;
    for (;;) {
      options.alive();
      const done = state.result;
      if (done) {
        if (done.failed > 0)
          throw new Error(`${done.failed} warm-up requests failed: ${done.failureSamples.join("; ")}`);
        const ids = done.accepted.map(([id]) => id);
        if (ids.every(options.calledBack)) return ids;
      } else if (load.exited()) {
        throw new Error(`the warm-up load generator ended without a result:\n${load.output()}`);
      }
      if (performance.now() > deadline)
        throw new Error(`the warm-up was not called back within ${WARMUP_TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await load.stop();
  }
}
