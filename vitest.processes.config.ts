import { defineConfig } from "vitest/config";
import base from "./vitest.config.ts";

/**
 * `npm run test:processes`: test/processes, the tests that start Shiri as processes of its own
 * (the CLI, several API and worker processes on one database, a database outage, a worker killed
 * and restarted). CI runs them against the compiled production tree (SHIRI_UNDER_TEST).
 */
export default defineConfig({
  test: { ...base.test, include: ["test/processes/**/*.test.ts"] },
});
