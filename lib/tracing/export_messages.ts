/**
 * The messages between a tracer (on the request thread) and its export worker.
 *
 * @module
 */

/** Tracer → worker. */
export type ToExportWorker =
  | {
    type: "start";
    /** The gRPC target (`host:port`, `unix:///path`). */
    target: string;
    /** The configured endpoint, as logs name it. */
    endpoint: string;
    timeoutMs: number;
  }
  /** An encoded `ExportTraceServiceRequest` of `spans` spans, its buffer transferred. */
  | { type: "export"; request: Uint8Array; spans: number }
  | { type: "close" };

/** Worker → tracer. */
export type FromExportWorker =
  /** A batch has been sent, or has failed: its spans no longer count against the queue. */
  | { type: "done"; spans: number }
  | { type: "log"; level: "warn" | "info"; message: string }
  | { type: "closed" };
