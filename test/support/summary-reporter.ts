import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints one plain "N passed, N failed, N skipped" line so CI logs read at a glance, then every
 * test skipped with a reason (`ctx.skip(reason)`, e.g. a tool not installed here), with the reason.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const reasons: string[] = [];
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const result = test.result();
        if (result.state === "passed") passed++;
        else if (result.state === "failed") failed++;
        else {
          skipped++;
          if (result.state === "skipped" && result.note)
            reasons.push(
              `skipped: ${path.relative(process.cwd(), mod.moduleId)} > ${test.name}: ${result.note}`,
            );
        }
      }
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    for (const reason of reasons) process.stdout.write(`${reason}\n`);
  }
}
