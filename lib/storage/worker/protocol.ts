/**
 * The messages between a store owner (`owner.ts`) and its clients (`client.ts`) over one
 * MessagePort, and how a `StoreError` crosses it. Every message is structured-cloned.
 * @module
 */

import { type KeyValue, StoreError, type StoreErrorCode, type StoreEvent } from "../store.ts";

/** The end of a channel both sides use: a MessagePort (or a Worker, or a worker's `self`). */
export interface Port {
  postMessage(message: unknown): void;
  onmessage: ((ev: MessageEvent) => void) | null;
  close?(): void;
}

/**
 * Messages to one port, coalesced: everything sent in one turn of the event loop (replies to a
 * burst of writes, a batch of events) crosses as one message, an array, so that a busy channel
 * costs one structured clone and one wake-up of the other thread per turn, not per message.
 */
export class Outbox {
  readonly #port: Port;
  #queue: unknown[] = [];

  constructor(port: Port) {
    this.#port = port;
  }

  send(message: unknown): void {
    this.#queue.push(message);
    if (this.#queue.length === 1) queueMicrotask(() => this.flush());
  }

  /** Posts what is queued now (before the port closes). */
  flush(): void {
    const q = this.#queue;
    if (q.length === 0) return;
    this.#queue = [];
    this.#port.postMessage(q.length === 1 ? q[0] : q);
  }
}

/** Each message of what {@link Outbox} posted. */
export function received<T>(data: unknown): T[] {
  return (Array.isArray(data) ? data : [data]) as T[];
}

/** A key-value as sent: `stale` set when the owner's store reports it stale. */
export type WireKeyValue = KeyValue & { stale?: true };

/** A write, a revision probe or a compaction, asked by a client. */
export type Request =
  | { t: "create"; id: number; key: string; value: string }
  | { t: "update"; id: number; key: string; value: string; expected: number }
  | { t: "delete"; id: number; key: string; expected?: number }
  | { t: "revision"; id: number }
  | { t: "compact"; id: number; revision: number }
  | { t: "bye" };

/** A request before the client numbers it. */
export type Ask = Request extends infer R ? R extends { id: number } ? Omit<R, "id"> : never
  : never;

/** What the owner sends: the first state, events, replies, and the end. */
export type Notice =
  /** The keys at `revision` (the oldest the owner can replay from); events follow, up to
   * `current` (the owner's revision then) and on. */
  | { t: "init"; kvs: WireKeyValue[]; revision: number; current: number }
  | { t: "events"; events: StoreEvent[] }
  /** Events were lost (the owner compacted past this client's feed): start over here. */
  | { t: "resync"; kvs: WireKeyValue[]; revision: number }
  /** Some client compacted the store to `revision`. */
  | { t: "compacted"; revision: number }
  | { t: "reply"; id: number; result?: unknown; error?: WireError }
  /** The owner's store closed. */
  | { t: "closed" };

export interface WireError {
  name: string;
  message: string;
  code?: StoreErrorCode;
  key?: string;
}

/** An error as it crosses the channel. */
export function toWire(err: unknown): WireError {
  if (err instanceof StoreError) {
    return { name: err.name, message: err.message, code: err.code, key: err.key };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message };
}

/** The error a client throws for a {@link WireError}: a `StoreError` again when it was one. */
export function fromWire(w: WireError): Error {
  if (w.code) return new StoreError(w.code, w.key ?? "", w.message);
  const err = new Error(w.message);
  err.name = w.name;
  return err;
}
