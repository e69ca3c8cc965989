/**
 * The export worker: sends the tracer's encoded OTLP requests to the collector over gRPC
 * (`opentelemetry.proto.collector.trace.v1.TraceService/Export`, on our own gRPC channel,
 * `lib/grpc`; insecure as kube's),
 * one at a time, each within the export timeout, on a thread of its own so that the gRPC
 * client's work is not on the request thread. The requests arrive encoded (otlp_encoding.ts):
 * they go out as they are. A failed batch is dropped, as the SDK's gRPC exporter
 * drops it (it does not retry over gRPC); the first failure is logged, and the recovery.
 *
 * Messages in: `start`, `export` (answered with `done` once sent or failed), `close` (send
 * what is queued, each within its timeout, then `closed`).
 *
 * @module
 */

import { GrpcChannel, GrpcError, Status } from "../grpc/mod.ts";
import type { FromExportWorker, ToExportWorker } from "./export_messages.ts";

const EXPORT_PATH = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/** Deadlines missed in a row after which the connection is made anew (as the SDK's). */
const MAX_DEADLINES_MISSED = 5;

/** The worker's global scope, as far as this module uses it. */
const scope = globalThis as unknown as {
  postMessage(message: FromExportWorker): void;
  onmessage: ((e: MessageEvent<ToExportWorker>) => void) | null;
};

const post = (m: FromExportWorker) => scope.postMessage(m);

class Sender {
  #channel?: GrpcChannel;
  readonly #queue: { request: Uint8Array; spans: number }[] = [];
  #sending = false;
  #failing = false;
  #deadlinesMissed = 0;
  #idle?: () => void;

  constructor(
    readonly target: string,
    readonly endpoint: string,
    readonly timeoutMs: number,
  ) {}

  enqueue(request: Uint8Array, spans: number): void {
    this.#queue.push({ request, spans });
    if (!this.#sending) this.#next();
  }

  /** Resolves once everything queued has been sent or has failed. */
  drained(): Promise<void> {
    if (!this.#sending) return Promise.resolve();
    return new Promise((r) => this.#idle = r);
  }

  #next(): void {
    const batch = this.#queue.shift();
    if (!batch) {
      this.#sending = false;
      this.#idle?.();
      return;
    }
    this.#sending = true;
    this.#send(batch.request, (err) => {
      this.#result(err);
      if (batch.spans) post({ type: "done", spans: batch.spans });
      this.#next();
    });
  }

  #send(request: Uint8Array, done: (err: Error | null) => void): void {
    this.#channel ??= openChannel(this.target);
    this.#channel.unary(EXPORT_PATH, request, { timeoutMs: this.timeoutMs }).then(
      () => done(null),
      (err) => done(err instanceof Error ? err : new Error(String(err))),
    );
  }

  /** Logs when exports start failing and when they work again (not each failure: a
   * collector that is down would fill the log). */
  #result(err: Error | null): void {
    if (err instanceof GrpcError && err.code === Status.DEADLINE_EXCEEDED) {
      if (++this.#deadlinesMissed > MAX_DEADLINES_MISSED) {
        this.#channel?.close(false);
        this.#channel = undefined;
        this.#deadlinesMissed = 0;
      }
    } else {
      this.#deadlinesMissed = 0;
    }
    if (err && !this.#failing) {
      this.#failing = true;
      post({
        type: "log",
        level: "warn",
        message: `tracing: cannot export spans to ${this.endpoint} (dropping them until it ` +
          `answers): ${err.message}`,
      });
    } else if (!err && this.#failing) {
      this.#failing = false;
      post({
        type: "log",
        level: "info",
        message: `tracing: exporting spans to ${this.endpoint} again`,
      });
    }
  }
}

/** A channel to `target`: `host:port` over TCP, or `unix:///path`. */
function openChannel(target: string): GrpcChannel {
  const unix = target.startsWith("unix://") ? new URL(target).pathname : undefined;
  const at = target.lastIndexOf(":");
  const hostname = target.slice(0, at).replace(/^\[(.*)\]$/, "$1");
  const port = Number(target.slice(at + 1));
  return new GrpcChannel({
    authority: unix === undefined ? target : "localhost",
    secure: false,
    dial: async () => {
      if (unix !== undefined) {
        return { conn: await Deno.connect({ transport: "unix", path: unix }) };
      }
      const conn = await Deno.connect({ hostname, port });
      conn.setNoDelay(true);
      return { conn };
    },
  });
}

let sender: Sender | undefined;

scope.onmessage = (e: MessageEvent<ToExportWorker>) => {
  const m = e.data;
  if (m.type === "start") {
    sender = new Sender(m.target, m.endpoint, m.timeoutMs);
    // An empty request now: a collector that cannot be reached is logged at once.
    sender.enqueue(new Uint8Array(0), 0);
  } else if (m.type === "export") {
    sender?.enqueue(m.request, m.spans);
  } else if (m.type === "close") {
    const s = sender;
    // The connection is not closed with a GOAWAY but left to the worker's end: Deno's
    // node:http2 (a collector or test receiver on Deno) can abort the whole process on a
    // GOAWAY (denoland/deno#36788); a connection that just ends is safe.
    (s?.drained() ?? Promise.resolve()).finally(() => post({ type: "closed" }));
  }
};
