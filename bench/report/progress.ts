/**
 * A one-line progress bar on stderr while the bench runs: redrawn in place on a terminal,
 * plain lines every few seconds otherwise (CI logs), so stdout stays clean for the table.
 */
export interface StepProgress {
  /** fraction 0–1 of this step; note is a short live figure such as "812 req/s". */
  update(fraction: number, note?: string): void;
  done(note: string): void;
}

const WIDTH = 24;
const REDRAW_MS = 100;
const PLAIN_EVERY_MS = 5_000;

export class Progress {
  private index = 0;
  private readonly tty: boolean;

  constructor(
    private readonly total: number,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {
    this.tty = Boolean(out.isTTY) && process.env.CI === undefined;
  }

  /** Writes a line of its own (clearing the bar first on a terminal). */
  note(line: string): void {
    if (this.tty) this.out.write("\r\x1b[2K");
    this.out.write(`${line}\n`);
  }

  step(label: string): StepProgress {
    this.index++;
    const prefix = `[${this.index}/${this.total}] ${label}`;
    const started = performance.now();
    let lastDraw = this.tty ? 0 : started;
    let finished = false;
    const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
    if (!this.tty) this.out.write(`${prefix} …\n`);
    return {
      update: (fraction, note = "") => {
        if (finished) return;
        const now = performance.now();
        const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
        const pct = `${Math.floor(f * 100)}%`.padStart(4);
        if (this.tty) {
          if (now - lastDraw < REDRAW_MS) return;
          lastDraw = now;
          const filled = Math.round(f * WIDTH);
          const bar = `${"█".repeat(filled)}${"░".repeat(WIDTH - filled)}`;
          const line = `${prefix}  ${bar} ${pct}  ${elapsed()}  ${note}`;
          this.out.write(`\r\x1b[2K${line.slice(0, (this.out.columns || 120) - 1)}`);
        } else if (now - lastDraw >= PLAIN_EVERY_MS) {
          lastDraw = now;
          this.out.write(`${prefix} ${pct} ${elapsed()} ${note}\n`);
        }
      },
      done: (note) => {
        finished = true;
        if (this.tty) this.out.write("\r\x1b[2K");
        this.out.write(`${prefix} done in ${elapsed()}: ${note}\n`);
      },
    };
  }
}
