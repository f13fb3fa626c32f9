import { defineConfig } from "vitest/config";
import { PROCESS_TESTS } from "./test/suites.ts";

/** `npm run test:processes`: the tests that start Shiri as processes of its own (test/suites.ts). */
export default defineConfig({
  test: {
    include: PROCESS_TESTS,
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: more forks than that only adds contention on the shared Postgres.
    maxWorkers: 2,
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
