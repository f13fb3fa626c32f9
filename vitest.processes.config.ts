import { configDefaults, defineConfig } from "vitest/config";
import { PROCESS_TESTS } from "./test/suites.ts";
import base from "./vitest.config.ts";

/** `npm run test:processes`: the tests that start Shiri as processes of its own (test/suites.ts). */
export default defineConfig({
  test: { ...base.test, include: PROCESS_TESTS, exclude: configDefaults.exclude },
});
