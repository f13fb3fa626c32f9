import { type Pool, withTransaction } from "../db/pool.ts";
import type { Queue } from "../queue/boss.ts";
import { announcementsLost } from "../queue/wakeups.ts";
import { recordSends, type SendToRecord, UnapprovedSenderError } from "./record-send.ts";

export interface SendCommitterOptions {
  /** Sends of one account committed together, at most. */
  maxSends: number;
  /** Messages committed together, at most (a send larger than this goes alone). */
  maxMessages: number;
  /** Transactions this process has open at once (each holds a pooled connection). */
  maxOpen: number;
  dispatchBatchSize: number;
}

interface Waiting {
  item: SendToRecord;
  /** Told the messages of the batch that went to opted-out numbers. */
  resolve: (optedOut: ReadonlySet<string>) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for sends. Every send of an account debits the account's one balance row, whose
 * lock is held until the COMMIT is on disk: one transaction per send would queue an account's
 * sends behind each other's fsync. Instead, the sends of an account that arrive while its last
 * transaction commits wait for it and are then written together, in one transaction with one
 * debit and one COMMIT. A batch holds one account's sends only, so transactions never wait on each
 * other's rows in a different order; accounts take turns. Each caller's promise settles when its
 * own send is committed or refused. Correct across processes: the balance row still serialises
 * every process's batches of an account, and the CHECK on it still refuses an overdraft.
 */
export class SendCommitter {
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly committing = new Set<string>();

  constructor(
    private readonly pool: Pool,
    private readonly boss: Queue,
    private readonly options: SendCommitterOptions,
  ) {}

  /**
   * Resolves once the send is committed, with the ids of its messages (among others of the batch)
   * that were to opted-out numbers; rejects with UnapprovedSenderError, InsufficientBalanceError or
   * the database's error.
   */
  commit(item: SendToRecord): Promise<ReadonlySet<string>> {
    return new Promise((resolve, reject) => {
      const account = item.send.accountId;
      const queue = this.waiting.get(account);
      if (queue) queue.push({ item, resolve, reject });
      else this.waiting.set(account, [{ item, resolve, reject }]);
      this.pump();
    });
  }

  private pump(): void {
    for (const [account, queue] of this.waiting) {
      if (this.committing.size >= this.options.maxOpen) return;
      if (this.committing.has(account)) continue;
      const batch = this.take(queue);
      // Accounts take turns: one with more waiting goes to the back of the line.
      this.waiting.delete(account);
      if (queue.length > 0) this.waiting.set(account, queue);
      this.committing.add(account);
      void this.write(account, batch).finally(() => {
        this.committing.delete(account);
        this.pump();
      });
    }
  }

  private take(queue: Waiting[]): Waiting[] {
    let messages = 0;
    let count = 0;
    while (count < queue.length && count < this.options.maxSends) {
      const size = queue[count]?.item.send.messages.length ?? 0;
      if (count > 0 && messages + size > this.options.maxMessages) break;
      messages += size;
      count++;
    }
    return queue.splice(0, count);
  }

  private async write(account: string, batch: Waiting[]): Promise<void> {
    try {
      await this.record(account, batch);
    } catch (err) {
      // Rolled back: whatever it announced was never sent (src/queue/wakeups.ts).
      announcementsLost();
      if (batch.length === 1) return batch[0]?.reject(err);
      // One send's trouble — most often a balance that covers some of the sends, not all — must
      // not fail the others: each is tried again on its own, in the order they came.
      for (const waiting of batch)
        await this.record(account, [waiting]).catch((failed: unknown) => {
          announcementsLost();
          waiting.reject(failed);
        });
    }
  }

  private async record(account: string, batch: Waiting[]): Promise<void> {
    const { refused, optedOut } = await withTransaction(this.pool, (tx) =>
      recordSends(
        tx,
        this.boss,
        account,
        batch.map((w) => w.item),
        { dispatchBatchSize: this.options.dispatchBatchSize },
      ),
    );
    batch.forEach((waiting, no) => {
      if (refused.has(no)) waiting.reject(new UnapprovedSenderError());
      else waiting.resolve(optedOut);
    });
  }
}
