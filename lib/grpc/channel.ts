/**
 * A gRPC channel to one server over one HTTP/2 connection (`h2_session.ts`), reconnecting with
 * backoff when it is lost: unary calls and bidirectional streams of length-prefixed messages
 * (the gRPC over HTTP/2 protocol). Messages are bytes here; their encoding is the caller's.
 *
 * Calls fail fast while the server cannot be reached (`UNAVAILABLE`), unless they ask to wait
 * for it (`waitForReady`, until their deadline), as in gRPC's own clients. A call is never sent
 * twice.
 * @module
 */

import {
  CANCEL,
  type H2Error,
  H2Session,
  type H2Stream,
  NO_ERROR,
  type StreamEvents,
  type Transport,
} from "./h2_session.ts";
import { encodeHeaders } from "./hpack.ts";

/** gRPC status codes used here. */
export const Status = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

/** A call that ended with a status other than OK. */
export class GrpcError extends Error {
  override name = "GrpcError";
  readonly code: number;
  readonly details: string;
  constructor(code: number, details: string) {
    super(`${code} ${STATUS_NAMES[code] ?? "UNKNOWN"}: ${details}`);
    this.code = code;
    this.details = details;
  }
}

const STATUS_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(Status).map(([name, code]) => [code, name]),
);

/** Opens the transport: TCP, or TLS negotiated with ALPN `h2`; `early` bytes already read. */
export type Dial = () => Promise<{ conn: Transport; early?: Uint8Array }>;

export interface ChannelOptions {
  dial: Dial;
  /** `:authority` of every request (`host:port`). */
  authority: string;
  secure: boolean;
  /** Reconnect backoff: first and largest wait after a failed attempt (ms). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Largest response message accepted. */
  maxMessageBytes?: number;
}

export interface CallOptions {
  /** How long the call may take, in ms (sent as `grpc-timeout`). */
  timeoutMs?: number;
  /** Wait for the connection (until the deadline) instead of failing at once when it is down. */
  waitForReady?: boolean;
  /** Extra request headers (lower-case names), such as `traceparent`. */
  metadata?: ReadonlyArray<readonly [string, string]>;
}

/** A bidirectional stream's events. */
export interface StreamHandlers {
  message(bytes: Uint8Array): void;
  /** The stream ended: `null` for OK, else why. Called once. */
  end(err: GrpcError | null): void;
}

/** An open bidirectional stream. */
export interface ClientStream {
  /** Sends a message; its bytes are copied at once (the caller may reuse them). */
  write(message: Uint8Array): void;
  /** Ends the stream from our side with CANCELLED (the server's answer is not awaited). */
  cancel(): void;
}

const USER_AGENT = "platform-grpc/1";
/** Distinct (path, timeout) header blocks kept. */
const MAX_KEPT_BLOCKS = 64;
/** How often deadlines are checked: a call ends at most this much after its deadline. */
const DEADLINE_TICK_MS = 10;

export class GrpcChannel {
  readonly #opts: ChannelOptions;
  readonly #prefixes = new Map<string, Uint8Array>();
  readonly #blocks = new Map<string, Uint8Array>();
  /** Calls with a deadline, checked by one timer (not one timer per call). */
  readonly #deadlines = new Set<Call>();
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #session: H2Session | undefined;
  #connecting: Promise<H2Session> | undefined;
  /** While reconnecting is backing off: until when, and the last failure. */
  #retryAt = 0;
  #backoff: number;
  #lastError = "";
  #closed = false;
  /** Calls waiting for a connection. */
  readonly #waiters = new Set<() => void>();

  constructor(opts: ChannelOptions) {
    this.#opts = opts;
    this.#backoff = opts.initialBackoffMs ?? 100;
  }

  /** One request message (copied as given), one response message. */
  unary(path: string, request: Uint8Array, opts: CallOptions = {}): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      let response: Uint8Array | undefined;
      this.#start(path, opts, {
        message: (bytes) => {
          response = bytes;
        },
        end: (err) => {
          if (err) reject(err);
          else if (!response) reject(new GrpcError(Status.INTERNAL, "no response message"));
          else resolve(response);
        },
      }, request);
    });
  }

  /** Opens a bidirectional stream; `handlers` hear its messages and its end. */
  stream(path: string, handlers: StreamHandlers, opts: CallOptions = {}): ClientStream {
    return this.#start(path, opts, handlers);
  }

  /**
   * Closes the connection; calls in flight fail. `graceful`: tell the server first (GOAWAY);
   * otherwise the socket just ends (some HTTP/2 servers on Deno's `node:http2` abort their
   * process on a GOAWAY: denoland/deno#36788).
   */
  close(graceful = true): void {
    this.#closed = true;
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    this.#deadlines.clear();
    this.#session?.close("channel closed", graceful);
    this.#session = undefined;
    for (const wake of this.#waiters) wake();
  }

  #start(
    path: string,
    opts: CallOptions,
    handlers: StreamHandlers,
    unaryRequest?: Uint8Array,
  ): ClientStream {
    const call = new Call(this, path, opts, handlers, this.#opts.maxMessageBytes ?? 64 << 20);
    if (opts.timeoutMs !== undefined) this.#watchDeadline(call);
    if (unaryRequest) call.write(unaryRequest, true);
    const session = this.#session;
    if (session?.usable) call.attach(session);
    else this.#whenReady(call, opts);
    return call;
  }

  /** The header block of a request on `path` (kept for calls without metadata). */
  requestHeaders(path: string, opts: CallOptions): Uint8Array {
    if (opts.metadata?.length) return this.#requestHeaders(path, opts);
    const key = `${opts.timeoutMs ?? ""} ${path}`;
    let block = this.#blocks.get(key);
    if (!block) {
      block = this.#requestHeaders(path, opts);
      if (this.#blocks.size < MAX_KEPT_BLOCKS) this.#blocks.set(key, block);
    }
    return block;
  }

  #requestHeaders(path: string, opts: CallOptions): Uint8Array {
    let prefix = this.#prefixes.get(path);
    if (!prefix) {
      prefix = encodeHeaders([
        [":method", "POST"],
        [":scheme", this.#opts.secure ? "https" : "http"],
        [":path", path],
        [":authority", this.#opts.authority],
        ["content-type", "application/grpc"],
        ["te", "trailers"],
        ["user-agent", USER_AGENT],
      ]);
      this.#prefixes.set(path, prefix);
    }
    const extra: [string, string][] = [];
    if (opts.timeoutMs !== undefined) {
      extra.push(["grpc-timeout", grpcTimeout(opts.timeoutMs)]);
    }
    for (const field of opts.metadata ?? []) extra.push([field[0], field[1]]);
    if (extra.length === 0) return prefix;
    const tail = encodeHeaders(extra);
    const block = new Uint8Array(prefix.length + tail.length);
    block.set(prefix);
    block.set(tail, prefix.length);
    return block;
  }

  #watchDeadline(call: Call): void {
    this.#deadlines.add(call);
    this.#sweeper ??= setInterval(() => {
      const now = performance.now();
      for (const c of this.#deadlines) {
        if (c.done) this.#deadlines.delete(c);
        else if (now >= c.deadline) {
          this.#deadlines.delete(c);
          // A call that never had a connection says why there was none.
          const why = c.attached || !this.#lastError
            ? "deadline exceeded"
            : `deadline exceeded while connecting (last error: ${this.#lastError})`;
          c.fail(new GrpcError(Status.DEADLINE_EXCEEDED, why));
        }
      }
      if (this.#deadlines.size === 0) {
        clearInterval(this.#sweeper);
        this.#sweeper = undefined;
      }
    }, DEADLINE_TICK_MS);
  }

  /** A finished call stops being checked. */
  settled(call: Call): void {
    this.#deadlines.delete(call);
  }

  async #whenReady(call: Call, opts: CallOptions): Promise<void> {
    for (;;) {
      if (call.done) return;
      if (this.#closed) return call.fail(new GrpcError(Status.CANCELLED, "channel closed"));
      const session = this.#session;
      if (session?.usable) return call.attach(session);
      const now = Date.now();
      if (!this.#connecting && now >= this.#retryAt) this.#connect();
      if (!opts.waitForReady && !this.#connecting) {
        return call.fail(new GrpcError(Status.UNAVAILABLE, this.#lastError || "not connected"));
      }
      if (!opts.waitForReady) {
        try {
          call.attach(await this.#connecting!);
        } catch {
          call.fail(new GrpcError(Status.UNAVAILABLE, this.#lastError));
        }
        return;
      }
      // Wait for the attempt under way, or the next one, or the call's deadline.
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          call.waiting = undefined;
          resolve();
        };
        const timer = setTimeout(wake, Math.max(1, this.#retryAt - Date.now()));
        this.#waiters.add(wake);
        call.waiting = wake;
      });
    }
  }

  #connect(): void {
    const attempt = (async () => {
      const { conn, early } = await this.#opts.dial();
      if (this.#closed) {
        conn.close();
        throw new Error("channel closed");
      }
      const session: H2Session = new H2Session(conn, (err) => this.#lost(session, err), early);
      return session;
    })();
    this.#connecting = attempt;
    attempt.then((session) => {
      this.#connecting = undefined;
      this.#session = session;
      this.#backoff = this.#opts.initialBackoffMs ?? 100;
      this.#retryAt = 0;
      this.#wakeAll();
    }, (err) => {
      this.#connecting = undefined;
      this.#lastError = `cannot connect to ${this.#opts.authority}: ${
        err instanceof Error ? err.message : err
      }`;
      this.#retryAt = Date.now() + this.#backoff;
      this.#backoff = Math.min(this.#backoff * 2, this.#opts.maxBackoffMs ?? 2_000);
      this.#wakeAll();
    });
  }

  #lost(session: H2Session, err: H2Error): void {
    if (this.#session !== session) return;
    this.#session = undefined;
    this.#lastError = `${this.#opts.authority}: ${err.message}`;
  }

  #wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}

/** One call on the channel: its stream once attached, and the messages it is parsing. */
class Call implements ClientStream, StreamEvents {
  readonly #channel: GrpcChannel;
  readonly #path: string;
  readonly #opts: CallOptions;
  readonly #handlers: StreamHandlers;
  readonly #maxMessage: number;
  #session: H2Session | undefined;
  #stream: H2Stream | undefined;
  /** Messages written before the stream opened, and whether our side is then done. */
  #queued: Uint8Array[] = [];
  #endAfterQueued = false;
  /** When the call's deadline passes (`performance.now()` time), or never. */
  readonly deadline: number;
  #status: number | undefined;
  #httpStatus = "";
  #message = "";
  /** The message being read: its prefix so far, then its body and how much of it is in. */
  readonly #prefix = new Uint8Array(5);
  #prefixFilled = 0;
  #body: Uint8Array | undefined;
  #filled = 0;
  done = false;
  waiting: (() => void) | undefined;

  constructor(
    channel: GrpcChannel,
    path: string,
    opts: CallOptions,
    handlers: StreamHandlers,
    maxMessage: number,
  ) {
    this.#channel = channel;
    this.#path = path;
    this.#opts = opts;
    this.#handlers = handlers;
    this.#maxMessage = maxMessage;
    this.deadline = opts.timeoutMs === undefined ? Infinity : performance.now() + opts.timeoutMs;
  }

  /** Whether the call was ever sent on a connection. */
  get attached(): boolean {
    return this.#session !== undefined;
  }

  attach(session: H2Session): void {
    if (this.done) return;
    this.#session = session;
    try {
      this.#stream = session.open(this.#channel.requestHeaders(this.#path, this.#opts), this);
    } catch (err) {
      return this.fail(
        new GrpcError(Status.UNAVAILABLE, err instanceof Error ? err.message : String(err)),
      );
    }
    for (const message of this.#queued) session.send(this.#stream, message, false);
    if (this.#endAfterQueued) session.send(this.#stream, new Uint8Array(0), true);
    this.#queued = [];
  }

  write(message: Uint8Array, end = false): void {
    if (this.done) return;
    const framed = new Uint8Array(5 + message.length);
    new DataView(framed.buffer).setUint32(1, message.length);
    framed.set(message, 5);
    if (this.#stream) this.#session!.send(this.#stream, framed, end);
    else {
      this.#queued.push(framed);
      this.#endAfterQueued ||= end;
    }
  }

  cancel(): void {
    this.fail(new GrpcError(Status.CANCELLED, "cancelled by the client"));
  }

  /** Ends the call with `err` (or OK), resetting the stream if it is still open. */
  fail(err: GrpcError | null): void {
    if (this.done) return;
    this.done = true;
    if (this.deadline !== Infinity) this.#channel.settled(this);
    this.waiting?.();
    if (err && this.#stream) this.#session!.reset(this.#stream, CANCEL);
    this.#handlers.end(err);
  }

  // StreamEvents, from the session.

  headers(fields: [string, string][], end: boolean): void {
    for (const [name, value] of fields) {
      if (name === ":status") this.#httpStatus = value;
      else if (name === "grpc-status") this.#status = Number(value);
      else if (name === "grpc-message") this.#message = decodeMessage(value);
    }
    if (end) this.#finish();
  }

  /**
   * Length-prefixed messages out of DATA: each is copied once into its own array (the session
   * reuses its read buffer), however the frames split it.
   */
  data(bytes: Uint8Array, end: boolean): void {
    let off = 0;
    while (off < bytes.length && !this.done) {
      if (this.#body) {
        const take = Math.min(this.#body.length - this.#filled, bytes.length - off);
        this.#body.set(bytes.subarray(off, off + take), this.#filled);
        this.#filled += take;
        off += take;
        if (this.#filled === this.#body.length) this.#deliver();
        continue;
      }
      // The 5-byte prefix: compressed flag, then the length (big-endian).
      this.#prefix[this.#prefixFilled++] = bytes[off++];
      if (this.#prefixFilled < 5) continue;
      this.#prefixFilled = 0;
      if (this.#prefix[0] !== 0) {
        return this.fail(new GrpcError(Status.INTERNAL, "compressed message"));
      }
      const length = new DataView(this.#prefix.buffer).getUint32(1);
      if (length > this.#maxMessage) {
        return this.fail(new GrpcError(Status.RESOURCE_EXHAUSTED, `message of ${length} bytes`));
      }
      this.#body = new Uint8Array(length);
      this.#filled = 0;
      if (length === 0) this.#deliver();
    }
    if (end) this.#finish();
  }

  #deliver(): void {
    const message = this.#body!;
    this.#body = undefined;
    this.#handlers.message(message);
  }

  reset(reason: string): void {
    this.#stream = undefined;
    this.fail(new GrpcError(Status.UNAVAILABLE, reason));
  }

  #finish(): void {
    // The server is done: our side, if still open, ends too (no CANCEL for a finished call).
    const stream = this.#stream;
    this.#stream = undefined;
    if (stream && !stream.localDone) this.#session!.reset(stream, NO_ERROR);
    if (this.#status === undefined) {
      const http = Number(this.#httpStatus);
      const code = http === 200 ? Status.INTERNAL : HTTP_TO_GRPC[http] ?? Status.UNKNOWN;
      return this.fail(new GrpcError(code, `HTTP status ${this.#httpStatus || "missing"}`));
    }
    if (this.#status === Status.OK && (this.#body || this.#prefixFilled)) {
      return this.fail(new GrpcError(Status.INTERNAL, "the stream ended inside a message"));
    }
    this.fail(this.#status === Status.OK ? null : new GrpcError(this.#status, this.#message));
  }
}

/** gRPC's mapping of HTTP statuses for responses without a grpc-status. */
const HTTP_TO_GRPC: Record<number, number> = {
  400: Status.INTERNAL,
  401: 16,
  403: 7,
  404: Status.UNIMPLEMENTED,
  429: Status.UNAVAILABLE,
  502: Status.UNAVAILABLE,
  503: Status.UNAVAILABLE,
  504: Status.UNAVAILABLE,
};

/** `grpc-timeout`: at most eight digits, in milliseconds or, beyond that, seconds. */
export function grpcTimeout(ms: number): string {
  const millis = Math.max(1, Math.ceil(ms));
  return millis < 1e8 ? `${millis}m` : `${Math.min(Math.ceil(millis / 1000), 99_999_999)}S`;
}

/** `grpc-message` is percent-encoded UTF-8. */
function decodeMessage(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
