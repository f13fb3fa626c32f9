import { isDatabaseOutOfReach, type Pool, sqlState, withTransaction } from "../db/pool.ts";
import type { Queue } from "../queue/boss.ts";
import { announcementsLost } from "../queue/wakeups.ts";
import { OPTED_OUT } from "./prepare-send.ts";
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

/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = "23505";

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
      // Its connection lost, perhaps with the COMMIT's answer; or, tried alone after that, the
      // send met rows of its own (a unique key): either way the look-up tells.
      if (
        (isDatabaseOutOfReach(err) || sqlState(err) === UNIQUE_VIOLATION) &&
        (await this.answeredAsWritten(account, batch, err))
      )
        return;
      if (batch.length === 1) return batch[0]?.reject(err);
      // One send's trouble — most often a balance that covers some of the sends, not all — must
      // not fail the others: each is tried again on its own, in the order they came.
      for (const waiting of batch) await this.write(account, [waiting]);
    }
  }

  /**
   * After its connection was lost, perhaps with the COMMIT's answer: answers a batch that committed
   * as written (its sends tried again would meet their own rows), and every send with the error
   * when that cannot be told. False only for a batch known not to have committed.
   */
  private async answeredAsWritten(account: string, batch: Waiting[], err: unknown): Promise<boolean> {
    const written = await this.writtenOf(account, batch).catch(() => null);
    if (written?.sends.size === 0) return false;
    for (const waiting of batch)
      if (written === null) waiting.reject(err);
      else if (written.sends.has(waiting)) waiting.resolve(written.optedOut);
      else waiting.reject(new UnapprovedSenderError());
    return true;
  }

  /**
   * What of the batch is in the database: the sends whose messages are there (their ids are new,
   * so only this batch wrote them) and the opted-out messages among them. A committed batch writes
   * nothing only for a send whose sender is not approved. Read once the account's balance row is
   * free (within lock_timeout): a COMMIT still under way when its connection went holds it, and
   * its rows are not seen before it ends.
   */
  private async writtenOf(
    account: string,
    batch: Waiting[],
  ): Promise<{ sends: ReadonlySet<Waiting>; optedOut: ReadonlySet<string> }> {
    const ids = batch.flatMap((waiting) => waiting.item.send.messages.map((m) => m.id));
    const { rows } = await withTransaction(this.pool, async (tx) => {
      await tx.query("SELECT FROM account_balances WHERE account_id = $1 FOR SHARE", [account]);
      return tx.query<{ id: string; opted_out: boolean }>(
        "SELECT id, operator_response = $2 AS opted_out FROM messages WHERE id = ANY($1::uuid[])",
        [ids, OPTED_OUT],
      );
    });
    const found = new Set(rows.map((r) => r.id));
    return {
      sends: new Set(batch.filter((waiting) => waiting.item.send.messages.some((m) => found.has(m.id)))),
      optedOut: new Set(rows.filter((r) => r.opted_out).map((r) => r.id)),
    };
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
