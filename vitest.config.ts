import { defineConfig } from "vitest/config";
import { SLOW_FILES, slowFirst } from "./test/support/slow-first-sequencer.ts";

/**
 * `npm test`: test/unit, test/integration and test/security. The tests that start Shiri as
 * processes of its own are test/processes (`npm run test:processes`, vitest.processes.config.ts);
 * the fault suite is test/faults (`npm run test:faults`, vitest.faults.config.ts). The folder
 * decides which command runs a file (test/unit/test-folders.test.ts holds every file to one).
 */
export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts", "test/security/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: more forks than that only adds contention on the shared Postgres.
    maxWorkers: 2,
    // The minute-long files first, so that none of them is the last one running.
    sequence: { sequencer: slowFirst(SLOW_FILES) },
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
