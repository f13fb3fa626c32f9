import { existsSync } from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * `npm test`'s files that take a minute or so (a million-row fill, a window that opens at the next
 * whole minute, a minute's validity run out, connections dropped and retried), longest first.
 * Vitest orders files by the durations it cached on the last run, but CI starts from `npm ci`,
 * which has no cache: it then runs them in the order it finds them, and these small ones came
 * last, one of them running alone for a minute and a half after every other file had finished.
 */
export const SLOW_FILES = [
  "test/security/migration-locks.test.ts",
  "test/integration/send-options-dispatch.test.ts",
  "test/integration/dispatch-faults.test.ts",
  "test/security/migrations.test.ts",
  "test/integration/carrier-ids.test.ts",
  "test/security/bogus-keys.test.ts",
];

/** `npm run test:faults`' longest scenarios: a minute of failing callbacks, a worker killed. */
export const SLOW_FAULTS = [
  "test/faults/callbacks-failing-a-minute.test.ts",
  "test/faults/worker-killed.test.ts",
  "test/faults/database-restart.test.ts",
];

/** A sequencer that starts `slow` first, in that order, so their waits overlap the rest; then Vitest's order. */
export function slowFirst(slow: readonly string[]) {
  return class SlowFirstSequencer extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const root = this.ctx.config.root;
      // A file renamed or removed must leave the list too, or it would silently order nothing.
      const missing = slow.filter((f) => !existsSync(path.join(root, f)));
      if (missing.length > 0)
        throw new Error(`slowFirst names files that do not exist: ${missing.join(", ")}`);
      const rank = (spec: TestSpecification) => {
        const i = slow.indexOf(path.relative(root, spec.moduleId).split(path.sep).join("/"));
        return i < 0 ? slow.length : i;
      };
      // Array.prototype.sort is stable: the others keep Vitest's order.
      return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
    }
  };
}
