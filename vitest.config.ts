import { configDefaults, defineConfig } from "vitest/config";
import { PROCESS_TESTS } from "./test/suites.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The fault suite starts whole processes per scenario: `npm run test:faults` (vitest.faults.config.ts).
    // The tests that start Shiri as processes of its own: `npm run test:processes` (test/suites.ts).
    exclude: [...configDefaults.exclude, "test/faults/**", ...PROCESS_TESTS],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: more forks than that only adds contention on the shared Postgres.
    maxWorkers: 2,
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
