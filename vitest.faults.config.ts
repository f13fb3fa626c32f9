import { defineConfig } from "vitest/config";
import { SLOW_FAULTS, slowFirst } from "./test/support/slow-first-sequencer.ts";

/**
 * `npm run test:faults`: each file starts Shiri as production runs it (an API and a worker
 * process), injects one fault and checks the shared invariants (test/faults/support). Two files at
 * a time: a scenario mostly waits (for a lease, a heartbeat, a minute of failing callbacks), and
 * one at a time kept the two cores under a third busy (about 140 s of CPU, Postgres included, in
 * 253 s). Each file has its own database (database-restart its own server), so two never touch
 * the same data; the longest start first.
 */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    sequence: { sequencer: slowFirst(SLOW_FAULTS) },
    reporters: ["default"],
  },
});
