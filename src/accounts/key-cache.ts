/**
 * How long an API process keeps a key it looked up (with what the lookup brings: the account's
 * webhook events and send defaults, the key's scopes, addresses and end) before it asks the
 * database again. Every change to those is answered only after this long (keyChangesSettled), so
 * whichever process takes the next request, none can still hold the old: "revoked immediately;
 * the next request using the key gets 401" holds across processes without any process hearing of
 * the change (docs/decisions/0035-keys-kept-a-quarter-second.md). A constant, not a setting:
 * every process must keep keys no longer than every other waits.
 */
export const KEY_KEPT_MS = 250;

/**
 * Resolves once no process can still hold what a change committed before the call replaced.
 * Counted on the clock the caches use: a timer counts the event loop's whole milliseconds, and
 * may end a fraction of one early by that clock.
 */
export async function keyChangesSettled(): Promise<void> {
  const since = performance.now();
  for (let left = KEY_KEPT_MS; left > 0; left = KEY_KEPT_MS - (performance.now() - since)) {
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}

export interface KeyCacheOptions {
  /** How long an answer may be used, counted from before its lookup began. */
  keptMs: number;
  /** Tokens kept at most; beyond, the longest kept go first. */
  maxEntries: number;
  /** A monotonic clock in ms (performance.now by default). */
  now?: () => number;
}

/**
 * Answers of key lookups, by token, for `keptMs` from when their lookup began: a lookup that
 * began before a change committed may have read the old, and must not outlive the change's wait.
 * Only keys that were found are kept; an unknown token is looked up every time.
 */
export class KeyCache<Answer> {
  private readonly entries = new Map<string, { answer: Answer; lookedUpAt: number }>();
  private readonly now: () => number;

  constructor(private readonly options: KeyCacheOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** The moment to pass to `keep` for a lookup that begins now. */
  lookupBegins(): number {
    return this.now();
  }

  get(token: string): Answer | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (this.now() - entry.lookedUpAt < this.options.keptMs) return entry.answer;
    this.entries.delete(token);
    return undefined;
  }

  keep(token: string, answer: Answer, lookedUpAt: number): void {
    if (this.now() - lookedUpAt >= this.options.keptMs) return;
    // Re-inserted at the end: the map's order is the order of lookups, oldest first.
    this.entries.delete(token);
    this.entries.set(token, { answer, lookedUpAt });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) break;
      this.entries.delete(oldest);
    }
  }
}
