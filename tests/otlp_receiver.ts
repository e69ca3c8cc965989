// deno-lint-ignore-file no-explicit-any
/**
 * An OTLP/gRPC trace receiver for tests and the benchmark: grpc-js serving the trace
 * collector service of the OpenTelemetry protocol (testdata/otlp, loaded with proto-loader)
 * on a free loopback port, keeping what it receives as plain spans.
 */

// @ts-types="./grpc_server_types.d.ts"
import * as grpc from "@grpc/grpc-js";
// @ts-types="../lib/storage/etcd/proto_loader_types.d.ts"
import * as protoLoader from "@grpc/proto-loader";
import { Buffer } from "node:buffer";

/** A received span, ids in hex. */
export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  /** OTLP's SpanKind name: SPAN_KIND_SERVER, SPAN_KIND_INTERNAL, … */
  kind: string;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  /** OTLP's status code name: STATUS_CODE_UNSET, STATUS_CODE_ERROR, … */
  status: string;
  startNs: bigint;
  endNs: bigint;
  /** The resource's attributes (service.name, …). */
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver extends AsyncDisposable {
  /** `127.0.0.1:<port>`, as a TracingConfiguration's endpoint. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Spans received so far (counted without keeping them, with `keep: false`). */
  count(): number;
  /** Resolves once `pred` holds for the spans received (checked as they arrive). */
  waitFor(pred: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

const PROTOS = decodeURIComponent(new URL("../testdata/otlp/", import.meta.url).pathname);

let service: unknown;

function traceService(): unknown {
  if (service) return service;
  const def = protoLoader.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", {
    includeDirs: [PROTOS],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as any;
  service = pkg.opentelemetry.proto.collector.trace.v1.TraceService.service;
  return service;
}

/** The Export method without decoding: requests are counted as bytes (the benchmark's
 * receiver, so that decoding spans does not take CPU from the servers measured). */
const RAW_SERVICE = {
  Export: {
    path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
    requestStream: false,
    responseStream: false,
    requestDeserialize: (bytes: Uint8Array) => bytes,
    requestSerialize: (bytes: Uint8Array) => bytes,
    // An empty ExportTraceServiceResponse (grpc-js wants a Buffer).
    responseSerialize: () => Buffer.alloc(0),
    responseDeserialize: (bytes: Uint8Array) => bytes,
  },
};

/**
 * Starts a receiver. `keep: false` only counts spans; `decode: false` does not even decode
 * requests: `count()` is then the bytes received (the benchmark's).
 */
export async function otlpReceiver(
  opts: { keep?: boolean; decode?: boolean } = {},
): Promise<OtlpReceiver> {
  const keep = opts.keep ?? true;
  const decode = opts.decode ?? true;
  const spans: ReceivedSpan[] = [];
  let count = 0;
  const waiters = new Set<() => void>();
  const server = new grpc.Server();
  server.addService(decode ? traceService() : RAW_SERVICE, {
    Export(call: grpc.ServerUnaryCall<any>, callback: (err: null, res: unknown) => void) {
      if (!decode) {
        count += (call.request as Uint8Array).byteLength;
        callback(null, {});
        return;
      }
      for (const rs of call.request.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            count++;
            if (keep) spans.push(spanOf(s, resource));
          }
        }
      }
      for (const w of waiters) w();
      callback(null, {});
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      "127.0.0.1:0",
      grpc.ServerCredentials.createInsecure(),
      (err, p) => err ? reject(err) : resolve(p),
    )
  );
  const close = () =>
    new Promise<void>((resolve) => {
      server.tryShutdown(() => resolve());
      // Exporters keep their connections: do not wait for them to go.
      setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 200);
    });
  return {
    endpoint: `127.0.0.1:${port}`,
    spans,
    count: () => count,
    waitFor(pred, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pred(spans)) return;
          cleanup();
          resolve(spans);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`spans not received in ${timeoutMs} ms: ${describe(spans)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function spanOf(s: any, resource: ReceivedSpan["resource"]): ReceivedSpan {
  return {
    name: s.name,
    traceId: hex(s.traceId),
    spanId: hex(s.spanId),
    parentSpanId: hex(s.parentSpanId),
    kind: s.kind,
    attributes: attributesOf(s.attributes),
    links: (s.links ?? []).map((l: any) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
    status: s.status?.code ?? "STATUS_CODE_UNSET",
    startNs: BigInt(s.startTimeUnixNano ?? 0),
    endNs: BigInt(s.endTimeUnixNano ?? 0),
    resource,
  };
}

function attributesOf(list: any[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list ?? []) {
    const v = kv.value ?? {};
    const key = v.value as string | undefined;
    if (key === "stringValue") out[kv.key] = v.stringValue;
    else if (key === "intValue") out[kv.key] = Number(v.intValue);
    else if (key === "doubleValue") out[kv.key] = v.doubleValue;
    else if (key === "boolValue") out[kv.key] = v.boolValue;
  }
  return out;
}

function hex(bytes: Uint8Array | undefined): string {
  if (!bytes) return "";
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function describe(spans: ReceivedSpan[]): string {
  return spans.length ? spans.map((s) => s.name).join(", ") : "none";
}
