/**
 * Pacing of watch-stream writes.
 *
 * Each write to a watch stream costs the server several microseconds whatever its size (a
 * promise turn, a body chunk, a TLS record, a send call), so with many watchers the number of
 * writes, not the number of events, decides whether the server keeps up. A stream that wrote
 * less than a *window* ago holds its next events until the window has passed and then sends
 * everything that arrived meanwhile in one write, as Nagle's algorithm does for TCP.
 *
 * The window grows with the number of open watch streams of the server, `US_PER_STREAM`
 * microseconds each and at most `MAX_WINDOW_MS`: all streams together then make at most about
 * 1 / `US_PER_STREAM` writes a second however many there are (25,000/s), while a few watchers
 * (under 25) are never held at all. A stream that has been quiet for a window sends at once.
 * Held streams wake at shared 2 ms slots, so that a thousand of them need a few timers. Each
 * server has its own pacer (made by startServer, handed to the watch handler in its scope).
 *
 * The window also widens while the server is behind: when the slot timers fire late (its
 * event loop is busy, or other processes hold the CPU), it adds `WINDOW_PER_LATE_MS` for each
 * millisecond of smoothed lateness, within the same cap. Fewer writes then leave more CPU for
 * the events themselves. Lateness counts only while streams are being held: a second after the
 * last held stream woke, the window is the stream count's again.
 *
 * Measured with 1,000 watchers and 200 writes/s (bench/watch.ts) on 2 cores: unpaced, the
 * server spent a whole core and lag p99 was 95–165 ms; with a 40 ms window, 0.67 cores and
 * 62–64 ms. Three replicas on the same two cores with 333 watchers each (13 ms windows) write
 * three times as often as one: lag p99 read 2.1 and 3.0× one replica's, and 1.6 and 2.5× with
 * the window widened by lateness (README, "On etcd").
 * @module
 */

/** Window added per open watch stream, µs. */
const US_PER_STREAM = 40;
/** The longest a stream holds events back, ms. */
const MAX_WINDOW_MS = 50;
/** Held streams wake at multiples of this (ms), so that they share timers. */
const SLOT_MS = 2;

/** ms the window widens per ms of smoothed slot-timer lateness. */
const WINDOW_PER_LATE_MS = 12;
/** Weight of a new lateness sample in the smoothed lateness. */
const LATE_WEIGHT = 0.1;
/** Lateness measured longer ago than this (ms) no longer counts. */
const LATE_STALE_MS = 1000;

/** Counts the open watch streams of one server and hands out their batching windows. */
export class WatchPacer {
  #open = 0;
  #slots = new Map<number, Promise<void>>();
  /** Smoothed ms by which slot timers fired after their time, and when that was measured. */
  #late = 0;
  #lateAt = -Infinity;

  /** A watch stream started; call {@link closed} when it ends. */
  opened(): void {
    this.#open++;
  }

  closed(): void {
    this.#open--;
  }

  /** Open watch streams. */
  get open(): number {
    return this.#open;
  }

  /** How long (ms) a stream waits after a write before its next one; 0 = never held. */
  window(now: number = performance.now()): number {
    const base = (this.#open * US_PER_STREAM) / 1000;
    if (base < 1) return 0;
    const late = now - this.#lateAt < LATE_STALE_MS ? this.#late : 0;
    return Math.min(MAX_WINDOW_MS, base + WINDOW_PER_LATE_MS * late);
  }

  /**
   * How long a stream that last wrote at `lastWrite` (performance.now() ms) should still hold
   * its events at `now`: 0 when it may write at once.
   */
  holdFor(lastWrite: number, now: number): number {
    const window = this.window(now);
    if (window === 0) return 0;
    const hold = lastWrite + window - now;
    return hold > 0 ? hold : 0;
  }

  /** Resolves `ms` from now, rounded up to a shared slot: one timer per slot, not per stream. */
  wait(ms: number): Promise<void> {
    const slot = Math.ceil((performance.now() + ms) / SLOT_MS) * SLOT_MS;
    let p = this.#slots.get(slot);
    if (!p) {
      p = new Promise<void>((resolve) => {
        setTimeout(() => {
          this.#slots.delete(slot);
          const now = performance.now();
          this.#late += LATE_WEIGHT * (Math.max(0, now - slot) - this.#late);
          this.#lateAt = now;
          resolve();
        }, Math.max(0, slot - performance.now()));
      });
      this.#slots.set(slot, p);
    }
    return p;
  }
}
