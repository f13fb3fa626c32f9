/**
 * The tests that start Shiri as processes of its own: the CLI, several API and worker processes on
 * one database, a database outage, a worker killed and restarted. `npm run test:processes` runs
 * them (vitest.processes.config.ts), and CI runs them against the compiled production tree
 * (SHIRI_UNDER_TEST); `npm test` runs everything else but the fault suite.
 */
export const PROCESS_TESTS = [
  "test/integration/scale-out.test.ts",
  "test/integration/rate-limits-processes.test.ts",
  "test/integration/health.test.ts",
  "test/integration/database-outage.test.ts",
  "test/integration/dispatch-restart.test.ts",
  "test/integration/money-never-stuck.test.ts",
  "test/integration/cli.test.ts",
  "test/integration/cli-admin.test.ts",
  "test/integration/cli-send-defaults.test.ts",
  "test/integration/embedded-unavailable.test.ts",
];
