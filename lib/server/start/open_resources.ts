/**
 * What a server has opened, closed in reverse order of opening. Each start-up step registers
 * the stop of what it opens as it opens it; the one stack then closes everything opened so far
 * both when a later step fails and when the server is closed.
 */

type Stop = () => void | Promise<void>;

/** The resources to close, in reverse order of opening. */
export class OpenResources {
  readonly #stops: { what: string; stop: Stop }[] = [];

  /** Registers the stop of `what`, just opened: it runs before the stops registered earlier. */
  add(what: string, stop: Stop): void {
    this.#stops.push({ what, stop });
  }

  /**
   * Runs every stop once, the last registered first. A stop that fails does not keep the others
   * from running; its error goes to `onError` when given, else the first one is thrown at the
   * end.
   */
  async closeAll(onError?: (what: string, err: unknown) => void): Promise<void> {
    let failure: { err: unknown } | undefined;
    for (let next = this.#stops.pop(); next; next = this.#stops.pop()) {
      try {
        await next.stop();
      } catch (err) {
        if (onError) onError(next.what, err);
        else failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  }
}
