/**
 * A set of controllers started and stopped together: what the leader runs. Starting and
 * stopping are queued one after the other, so a term of leadership that ends while its
 * controllers are still starting stops them once they have started. A controller is made anew
 * for every start (a stopped controller does not start again).
 */

import type { Logger } from "../api/mod.ts";

/** A started controller. */
export interface RunningController {
  stop(): void | Promise<void>;
}

/** How to start one controller; undefined when it turns out to have nothing to run. */
export interface ControllerStarter {
  /** For logs: `the CSR controller`. */
  name: string;
  start(): Promise<RunningController | undefined>;
}

export class ControllerSet {
  readonly #logger: Logger;
  readonly #starters: ControllerStarter[] = [];
  #running: { name: string; controller: RunningController }[] = [];
  #active = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Whether the set runs (between {@link start} and {@link stop}). */
  get active(): boolean {
    return this.#active;
  }

  /** Adds a controller, after the others; when the set runs, starts it now. */
  add(starter: ControllerStarter): Promise<void> {
    this.#starters.push(starter);
    return this.#enqueue(async () => {
      if (this.#active) await this.#startOne(starter);
    });
  }

  /**
   * Starts every controller, in the order added. When one fails, those started are stopped
   * again and the error is thrown.
   */
  start(): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#active) return;
      this.#active = true;
      try {
        for (const starter of this.#starters) await this.#startOne(starter);
      } catch (err) {
        await this.#stopAll();
        throw err;
      }
    });
  }

  /** Stops every running controller, the last started first. */
  stop(): Promise<void> {
    return this.#enqueue(() => this.#stopAll());
  }

  async #startOne(starter: ControllerStarter): Promise<void> {
    const controller = await starter.start();
    if (controller) this.#running.push({ name: starter.name, controller });
  }

  async #stopAll(): Promise<void> {
    this.#active = false;
    for (let next = this.#running.pop(); next; next = this.#running.pop()) {
      try {
        await next.controller.stop();
      } catch (err) {
        this.#logger.error(`stopping ${next.name}`, err);
      }
    }
  }

  #enqueue(step: () => Promise<void>): Promise<void> {
    const done = this.#queue.then(step);
    this.#queue = done.catch(() => {});
    return done;
  }
}
