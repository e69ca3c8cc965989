/**
 * A finished span as the main thread hands it to the export worker: plain data (it crosses
 * a `postMessage`), times in milliseconds since the epoch.
 *
 * @module
 */

export interface SpanRecord {
  name: string;
  /** OTel's SpanKind: 0 internal, 1 server, 2 client. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  /** The parent is a caller's (its traceparent), not a span of this server. */
  parentRemote?: boolean;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  /** Spans linked to (a caller's traceparent not trusted as parent). */
  links?: { traceId: string; spanId: string; sampled: boolean }[];
  /** Failed: OTLP status ERROR with this message. */
  error?: string;
}

/** One value of a batch of finished spans, as the main thread sends it: per span, in order,
 * name, kind, traceId, spanId, parentSpanId ("" for none), parentRemote, startMs, endMs,
 * error ("" for none), the number of links and each link's traceId, spanId and sampled, the
 * number of attributes and each one's key and value. */
export type FlatValue = string | number | boolean;

/** Reads a batch of flat values back into records. */
export function unflatten(values: FlatValue[]): SpanRecord[] {
  const out: SpanRecord[] = [];
  let i = 0;
  while (i < values.length) {
    const r: SpanRecord = {
      name: values[i++] as string,
      kind: values[i++] as number,
      traceId: values[i++] as string,
      spanId: values[i++] as string,
      startMs: 0,
      endMs: 0,
      attributes: {},
    };
    const parent = values[i++] as string;
    if (parent) r.parentSpanId = parent;
    r.parentRemote = values[i++] as boolean;
    r.startMs = values[i++] as number;
    r.endMs = values[i++] as number;
    const error = values[i++] as string;
    if (error) r.error = error;
    const links = values[i++] as number;
    if (links) r.links = [];
    for (let l = 0; l < links; l++) {
      r.links!.push({
        traceId: values[i++] as string,
        spanId: values[i++] as string,
        sampled: values[i++] as boolean,
      });
    }
    const attributes = values[i++] as number;
    for (let a = 0; a < attributes; a++) {
      const key = values[i++] as string;
      r.attributes[key] = values[i++];
    }
    out.push(r);
  }
  return out;
}

/** Main thread → worker. */
export type ToExportWorker =
  | {
    type: "start";
    url: string;
    timeoutMs: number;
    maxQueueSize: number;
    resource: Record<string, string>;
    endpoint: string;
  }
  /** Finished spans: a JSON list of flat values (see {@link FlatValue}). */
  | { type: "spans"; json: string }
  | { type: "close" };

/** Worker → main thread. */
export type FromExportWorker =
  | { type: "taken" }
  | { type: "log"; level: "warn" | "info"; message: string }
  | { type: "closed" };
