import "server-only";

/**
 * Group commit: items submitted while a batch is in flight wait for it and go together as the next batch (one
 * statement over arrays, one transaction, one WAL flush). When nothing is in flight an item goes at once, so an
 * idle server adds no wait; under load the batch grows with the arrival rate during one round trip (the window
 * adapts by itself). `run` must answer one result per item, in order, and must be all-or-nothing (one statement).
 *
 * One item must not fail the others: the statements give each item its own outcome, refusing an item they cannot
 * take instead of raising (svc_reserve_batch, svc_clear_batch). Should the database still refuse a batch (an error no
 * item check foresaw), nothing of it was committed, and it is split in halves, each run again, down to the item that
 * fails alone: a bad item costs its batch about 2·log2(n) statements (16 for 256 items), not one per item. Any other
 * failure (a lost connection: the batch may have committed) fails every item of the batch.
 */
type Waiting<I, O> = { item: I; resolve: (o: O) => void; reject: (e: unknown) => void };

export class GroupCommit<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: {
      maxBatch: number;
      maxInFlight: number;
      /** True when the error proves the batch committed nothing (the database refused the statement). */
      isolatable: (error: unknown) => boolean;
    },
  ) {}

  /** Items waiting for the next batch (not those in flight). */
  get queued(): number {
    return this.queue.length;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private async runBatch(items: I[]): Promise<O[]> {
    const results = await this.run(items);
    if (results.length !== items.length) throw new Error(`group commit: ${results.length} results for ${items.length} items`);
    return results;
  }

  /**
   * A batch the database refused committed nothing; so that one bad item cannot fail the others that shared its
   * statement, each half is run again, and a half the database refuses again is split in turn: the items that fail
   * alone get their error, every other item its outcome.
   */
  private async isolate(batch: Waiting<I, O>[], error: unknown): Promise<void> {
    if (batch.length === 1) {
      batch[0].reject(error);
      return;
    }
    const half = Math.ceil(batch.length / 2);
    for (const part of [batch.slice(0, half), batch.slice(half)]) {
      try {
        const results = await this.runBatch(part.map((b) => b.item));
        part.forEach((b, i) => b.resolve(results[i]));
      } catch (partError) {
        if (this.options.isolatable(partError)) await this.isolate(part, partError);
        else part.forEach((b) => b.reject(partError));
      }
    }
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.inFlight += 1;
      this.runBatch(batch.map((b) => b.item))
        .then(
          (results) => batch.forEach((b, i) => b.resolve(results[i])),
          (error: unknown) => (this.options.isolatable(error) ? this.isolate(batch, error) : batch.forEach((b) => b.reject(error))),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}
