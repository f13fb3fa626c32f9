/**
 * Which destination hosts this worker process keeps out of its callback fetches
 * (docs/decisions/0040-a-host-that-hangs-gets-one-batch.md). A host is open once a job of it timed
 * out with no answer: the process's main fetch leaves its jobs in the queue, a fetch of one job at
 * a time, which skips the open hosts whose probe runs, gives it one (the probe), and at each of its
 * timeouts its jobs waiting in the queue go back to the outbox; any answer closes it. So a
 * receiver that hangs holds one of the process's slots, not its whole per-host share, and hosts
 * that hang cannot together fill the process. Each process learns on its own; the per-host bound
 * across workers (pg-boss group concurrency) is untouched.
 */

/** Open hosts remembered at most: hosts come from clients, so the oldest is forgotten first. */
const MAX_OPEN = 10_000;
/** An open host with no timeout for this long is forgotten (it had no job): its next job finds out. */
export const OPEN_FORGET_MS = 10 * 60_000;

/** What a job's requests came to, for its host's circuit. */
export interface HostOutcome {
  /** Some request got an answer (any status). */
  answered: boolean;
  /** Some request got no answer within the timeout. */
  timedOut: boolean;
}

export class HostCircuits {
  /** Jobs this process runs, by host. */
  private readonly running = new Map<string, number>();
  /**
   * Open hosts: when each opened (its first timeout since it last answered) and last timed out;
   * in the order of their last timeouts, oldest first.
   */
  private readonly open = new Map<string, { openedAt: number; lastTimeoutAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Hosts the main fetch leaves in the queue: every open one. */
  openHosts(): string[] {
    const forgetBefore = this.now() - OPEN_FORGET_MS;
    for (const [host, { lastTimeoutAt }] of this.open)
      if (lastTimeoutAt < forgetBefore && !this.running.has(host)) this.open.delete(host);
    return [...this.open.keys()];
  }

  /** Hosts the probe fetch leaves in the queue: open, and their probe running here. */
  probing(): string[] {
    return [...this.open.keys()].filter((host) => this.running.has(host));
  }

  /** Whether an open host has no job running here: a probe fetch may find one of its jobs. */
  wantsProbe(): boolean {
    for (const host of this.open.keys()) if (!this.running.has(host)) return true;
    return false;
  }

  /** A job for `host` started. */
  started(host: string): void {
    this.running.set(host, (this.running.get(host) ?? 0) + 1);
  }

  /**
   * A job for `host` is done. Any answer closes the host; a timeout with no answer opens it (or
   * keeps it open); a job that got neither leaves it as it was. Says whether it opened.
   */
  finished(host: string, outcome: HostOutcome): boolean {
    const running = (this.running.get(host) ?? 1) - 1;
    if (running > 0) this.running.set(host, running);
    else this.running.delete(host);
    if (outcome.answered) {
      this.open.delete(host);
      return false;
    }
    if (!outcome.timedOut) return false;
    const now = this.now();
    const was = this.open.get(host);
    if (!was && this.open.size >= MAX_OPEN) {
      const oldest = this.open.keys().next().value;
      if (oldest !== undefined) this.open.delete(oldest);
    }
    this.open.delete(host); // re-inserted: the order stays oldest timeout first
    this.open.set(host, { openedAt: was?.openedAt ?? now, lastTimeoutAt: now });
    return !was;
  }

  /** How long `host` has been open (0 when it is not). */
  heldFor(host: string): number {
    const state = this.open.get(host);
    return state ? this.now() - state.openedAt : 0;
  }

  isOpen(host: string): boolean {
    return this.open.has(host);
  }
}
