import { existsSync } from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take a minute or so (a million-row fill, a window that opens at the next whole
 * minute, a minute's validity run out, connections dropped and retried), longest first.
 * Vitest orders files by the durations it cached on the last run, but CI starts from `npm ci`,
 * which has no cache: it then starts the largest files first, and these small ones came last, one
 * of them running alone for a minute and a half after every other file had finished.
 */
export const SLOW_FILES = [
  "test/security/migration-locks.test.ts",
  "test/integration/send-options-dispatch.test.ts",
  "test/integration/dispatch-faults.test.ts",
  "test/security/migrations.test.ts",
  "test/integration/carrier-ids.test.ts",
  "test/security/bogus-keys.test.ts",
];

/** Starts SLOW_FILES first, in that order, so their waits overlap the rest; then Vitest's order. */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    // A file renamed or removed must leave this list too, or it would silently order nothing.
    const missing = SLOW_FILES.filter((f) => !existsSync(path.join(root, f)));
    if (missing.length > 0)
      throw new Error(`SLOW_FILES names files that do not exist: ${missing.join(", ")}`);
    const rank = (spec: TestSpecification) => {
      const i = SLOW_FILES.indexOf(path.relative(root, spec.moduleId).split(path.sep).join("/"));
      return i < 0 ? SLOW_FILES.length : i;
    };
    // Array.prototype.sort is stable: the others keep Vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
