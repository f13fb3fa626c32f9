export interface CoalescerOptions {
  /** Requests handed to one call, at most. */
  maxBatch: number;
  /** Calls running at once (each usually holds a pooled connection). */
  maxInFlight: number;
  /** Told the size of every batch, for a metric. */
  onBatch?: (size: number) => void;
}

interface Waiting<Request, Answer> {
  request: Request;
  resolve: (answer: Answer) => void;
  reject: (err: unknown) => void;
}

/**
 * Turns many concurrent requests into few calls: a request that arrives while `maxInFlight` calls
 * are running waits for one to end and then goes with every other waiting request in the next
 * call. An idle process answers a lone request at once; a busy one makes about one call per round
 * trip, not one per request, so a flood of requests cannot become a flood of statements (each
 * costs a socket write on both sides and a statement in the database). `run` answers the requests
 * in order; its failure fails the whole batch.
 */
export class Coalescer<Request, Answer> {
  private waiting: Waiting<Request, Answer>[] = [];
  private inFlight = 0;

  constructor(
    private readonly run: (requests: readonly Request[]) => Promise<readonly Answer[]>,
    private readonly options: CoalescerOptions,
  ) {}

  take(request: Request): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      this.options.onBatch?.(batch.length);
      // A synchronous throw in run() fails the batch like a rejection would.
      Promise.resolve()
        .then(() => this.run(batch.map((w) => w.request)))
        .then((answers) => {
          if (answers.length !== batch.length)
            throw new Error(`a batch of ${batch.length} got ${answers.length} answers`);
          batch.forEach((w, i) => {
            w.resolve(answers[i] as Answer);
          });
        })
        .catch((err: unknown) => {
          for (const w of batch) w.reject(err);
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}
