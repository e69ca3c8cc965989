/**
 * Items gathered and handed over in batches, one batch every {@link BATCH_WAIT_MS} at most:
 * how the audit log's batch mode writes (log_backend.ts, and the writer of every thread's
 * lines, shared_log.ts). An async write costs the writing thread 15–45 µs of CPU whatever its
 * size (a hand-off to a blocking thread and back; more while the store's files are being
 * written), so a write per event loop turn cost a GET more than its events' text did, and so
 * did writing again as soon as the last write ended (about 400 writes/s under creates, 5 µs of
 * each create). At 14,000 events/s a batch carries about 140.
 * @module
 */

/** How long a batch gathers items before it is handed over. */
const BATCH_WAIT_MS = 10;

export class SpacedBatches<T> {
  #items: T[] = [];
  #running: Promise<void> | undefined;

  /** `write` takes each batch; the next waits until it is done. It must not throw. */
  constructor(readonly write: (items: T[]) => Promise<void>) {}

  /** Items waiting for their batch. */
  get waiting(): number {
    return this.#items.length;
  }

  add(item: T): void {
    this.#items.push(item);
    this.#running ??= this.#run();
  }

  /** Resolves once every item added so far has been written. */
  async drain(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #run(): Promise<void> {
    for (;;) {
      await new Promise((r) => setTimeout(r, BATCH_WAIT_MS));
      if (this.#items.length === 0) break;
      const items = this.#items;
      this.#items = [];
      await this.write(items);
    }
    this.#running = undefined;
  }
}
