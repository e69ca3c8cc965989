/**
 * Calls between the main thread and a `--workers` worker over one MessagePort: each side
 * registers handlers by name and calls the other's, a promise per call resolved by the reply
 * (thread_link.ts uses it for the audit log, metrics and the serving certificate). A call with
 * a timeout rejects when no reply came in time (a stuck or dead thread must not hang the
 * caller); closing rejects every call still waiting.
 */

type Handler = (arg: unknown) => unknown;

type Message =
  | { t: "call"; id: number; name: string; arg: unknown }
  | { t: "reply"; id: number; value: unknown }
  | { t: "fail"; id: number; message: string };

/** The thread on the other side did not answer in time, or the link is closed. */
export class RpcUnavailable extends Error {}

export class PortRpc {
  readonly #port: MessagePort;
  readonly #handlers = new Map<string, Handler>();
  readonly #waiting = new Map<
    number,
    {
      resolve: (v: unknown) => void;
      reject: (e: Error) => void;
      timer?: ReturnType<typeof setTimeout>;
    }
  >();
  #nextId = 1;
  #closed = false;

  constructor(port: MessagePort) {
    this.#port = port;
    port.onmessage = (ev: MessageEvent<Message>) => this.#receive(ev.data);
  }

  /** Answers calls of `name` with `handler`'s value (awaited; a throw is the caller's). */
  handle(name: string, handler: Handler): void {
    this.#handlers.set(name, handler);
  }

  /** Calls the other side's `name`; rejects after `timeoutMs` (when given) without a reply. */
  call<T>(name: string, arg?: unknown, opts: { timeoutMs?: number } = {}): Promise<T> {
    if (this.#closed) return Promise.reject(new RpcUnavailable(`${name}: the link is closed`));
    const id = this.#nextId++;
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    const entry: {
      resolve: typeof resolve;
      reject: typeof reject;
      timer?: ReturnType<typeof setTimeout>;
    } = {
      resolve,
      reject,
    };
    if (opts.timeoutMs !== undefined) {
      entry.timer = setTimeout(() => {
        this.#waiting.delete(id);
        reject(new RpcUnavailable(`${name}: no answer within ${opts.timeoutMs} ms`));
      }, opts.timeoutMs);
    }
    this.#waiting.set(id, entry);
    this.#port.postMessage({ t: "call", id, name, arg } satisfies Message);
    return promise as Promise<T>;
  }

  /** Rejects the calls still waiting and closes the port. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of this.#waiting.values()) {
      clearTimeout(w.timer);
      w.reject(new RpcUnavailable("the link is closed"));
    }
    this.#waiting.clear();
    this.#port.close();
  }

  async #receive(m: Message): Promise<void> {
    if (m.t === "call") {
      const handler = this.#handlers.get(m.name);
      let reply: Message;
      try {
        if (!handler) throw new Error(`no handler for ${m.name}`);
        reply = { t: "reply", id: m.id, value: await handler(m.arg) };
      } catch (err) {
        reply = { t: "fail", id: m.id, message: err instanceof Error ? err.message : String(err) };
      }
      if (!this.#closed) this.#port.postMessage(reply);
      return;
    }
    const w = this.#waiting.get(m.id);
    if (!w) return; // timed out already
    this.#waiting.delete(m.id);
    clearTimeout(w.timer);
    if (m.t === "reply") w.resolve(m.value);
    else w.reject(new Error(m.message));
  }
}
