import { defineConfig } from "vitest/config";

/**
 * `npm run test:faults`: each file starts Shiri as production runs it (an API and a worker
 * process), injects one fault and checks the shared invariants (test/faults/support). One file at
 * a time: the processes of two scenarios would only fight over two cores and blur the timings.
 */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    reporters: ["default"],
  },
});
