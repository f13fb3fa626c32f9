/**
 * Steps to undo, run in reverse order whatever happens; each failure is reported, none skipped.
 * A run() while another is under way (Ctrl-C in the middle of a scenario's own cleanup) resolves
 * only once that one is done too, so nobody exits while processes are still being stopped.
 */
export class Cleanup {
  private readonly steps: Array<() => Promise<void>> = [];
  private done: Promise<void> = Promise.resolve();
  add(step: () => Promise<void>): void {
    this.steps.push(step);
  }
  run(): Promise<void> {
    const steps = this.steps.splice(0).reverse();
    this.done = this.done.then(async () => {
      for (const step of steps) {
        await step().catch((err: unknown) => process.stderr.write(`cleanup step failed: ${String(err)}\n`));
      }
    });
    return this.done;
  }
}
