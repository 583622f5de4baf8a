import "server-only";

/**
 * Group commit: items submitted while a batch is in flight wait for it and go together as the next batch (one
 * statement over arrays, one transaction, one WAL flush). When nothing is in flight an item goes at once, so an
 * idle server adds no wait; under load the batch grows with the arrival rate during one round trip (the window
 * adapts by itself). `run` must answer one result per item, in order, and must be all-or-nothing (one statement):
 * if the database refuses it, nothing of it was committed and each item is run again alone (one bad item fails only
 * itself); any other failure (a lost connection: the batch may have committed) fails every item of the batch.
 */
export class GroupCommit<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
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
   * A batch the database refused committed nothing; so that one bad item cannot fail the others that shared its statement,
   * each is run again on its own and gets its own outcome.
   */
  private async isolate(batch: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[]): Promise<void> {
    for (const b of batch) {
      try {
        b.resolve((await this.runBatch([b.item]))[0]);
      } catch (error) {
        b.reject(error);
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
          (error: unknown) =>
            batch.length > 1 && this.options.isolatable(error) ? this.isolate(batch) : batch.forEach((b) => b.reject(error)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}
