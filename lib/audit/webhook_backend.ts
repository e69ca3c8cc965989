/**
 * The webhook backend (`--audit-webhook-config-file`): events are POSTed to a URL as an
 * `EventList` (`audit.platform.io/v1`). The server start-up reads the kubeconfig and hands this
 * backend the URL, the HTTP client (CA, client certificate) and the `Authorization` header.
 *
 * Modes (`--audit-webhook-mode`):
 * - `batch` (the default): events wait in a bounded buffer (`--audit-webhook-batch-buffer-size`;
 *   when full, events are dropped and counted, logged once per burst; requests never wait). A
 *   batch leaves when it has `--audit-webhook-batch-max-size` events or its oldest event waited
 *   `--audit-webhook-batch-max-wait`; a batch whose JSON would pass {@link MAX_BATCH_BYTES} is
 *   split so that each POST stays under it (an event larger than that alone is dropped and
 *   logged). A POST that fails (an error, a status other than 2xx, no answer within the
 *   timeout) is tried again after `--audit-webhook-initial-backoff`, then twice that, … up to
 *   {@link RETRIES} retries; then the batch is dropped with a log line. One batch is sent at a
 *   time, so memory is bounded by the buffer and one batch whatever the webhook does.
 * - `blocking`: each event is POSTed (alone in an EventList) before the request goes on, once,
 *   bounded by the timeout; a failure is logged.
 * - `blocking-strict`: as blocking, and a RequestReceived event that cannot be sent fails the
 *   request (the filter answers 500).
 *
 * On close, what is buffered is sent within a short bound (`closeTimeoutMs`), without waiting
 * out backoffs; what is left then is dropped and logged.
 *
 * @module
 */

import type { Logger } from "../api/mod.ts";
import type { AuditLogMode } from "../config/mod.ts";
import { AUDIT_EVENT_API_VERSION, type AuditEvent } from "./event.ts";
import { eventJson } from "./event_json.ts";
import type { AuditBackend, AuditErrorCounter } from "./log_backend.ts";
import type { Stage } from "./policy.ts";
import { injectTraceparent } from "../tracing/mod.ts";

/** The largest body a batch POST carries (kube splits batches to stay under its limit). */
export const MAX_BATCH_BYTES = 3 * 1024 * 1024;
/** Retries of a batch POST after the first attempt. */
export const RETRIES = 3;

/** POSTs one body; resolves with the answer's status. */
export type WebhookPost = (body: string, signal: AbortSignal) => Promise<number>;

export interface WebhookBackendOptions {
  /** How a body reaches the webhook (see {@link httpPost}). */
  post: WebhookPost;
  /** @default "batch" */
  mode?: AuditLogMode;
  /** `--audit-webhook-batch-buffer-size`. @default 10000 */
  bufferSize?: number;
  /** `--audit-webhook-batch-max-size`. @default 400 */
  maxBatchSize?: number;
  /** Bytes of one POST's body at most. @default MAX_BATCH_BYTES */
  maxBatchBytes?: number;
  /** `--audit-webhook-batch-max-wait`. @default 30000 */
  maxWaitMs?: number;
  /** `--audit-webhook-initial-backoff`. @default 10000 */
  initialBackoffMs?: number;
  /** @default RETRIES */
  retries?: number;
  /** Bound of one POST. @default 30000 */
  timeoutMs?: number;
  /** How long close() sends what is buffered. @default 5000 */
  closeTimeoutMs?: number;
  logger: Logger;
  /** Counts events lost: `webhook` for failed sends, `buffered` for the buffer's overflow. */
  onError?: AuditErrorCounter;
}

/** An `EventList` of `events`, as the webhook receives it. */
export function eventList(events: readonly AuditEvent[]): string {
  return `{"kind":"EventList","apiVersion":"${AUDIT_EVENT_API_VERSION}","metadata":{},"items":[${
    events.map(eventJson).join(",")
  }]}`;
}

/** A {@link WebhookPost} by `fetch` to `url`, with the client's TLS settings and the header. */
export function httpPost(
  url: string,
  opts: { client?: Deno.HttpClient; authorization?: () => Promise<string> } = {},
): WebhookPost {
  return async (body, signal) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (opts.authorization) headers.authorization = await opts.authorization();
    injectTraceparent(headers);
    const res = await fetch(url, { method: "POST", headers, body, signal, client: opts.client });
    // The answer's body is of no interest, whatever it holds.
    await res.body?.cancel().catch(() => {});
    return res.status;
  };
}

export function openWebhookBackend(
  opts: WebhookBackendOptions,
): AuditBackend & { dropped(): number } {
  return (opts.mode ?? "batch") === "batch"
    ? new WebhookBatchBackend(opts)
    : new WebhookBlockingBackend(opts, opts.mode === "blocking-strict");
}

/** Sends `body` once, bounded by `timeoutMs` and `abort`; throws when it is not accepted. */
async function sendOnce(
  post: WebhookPost,
  body: string,
  timeoutMs: number,
  abort?: AbortSignal,
): Promise<void> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = abort ? AbortSignal.any([timeout, abort]) : timeout;
  let status: number;
  try {
    status = await post(body, signal);
  } catch (err) {
    if (timeout.aborted) throw new Error(`no answer within ${timeoutMs}ms`);
    throw err;
  }
  if (status < 200 || status > 299) throw new Error(`the webhook answered ${status}`);
}

class WebhookBlockingBackend {
  #failing = false;
  readonly #timeoutMs: number;
  constructor(readonly opts: WebhookBackendOptions, readonly strict: boolean) {
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  async process(ev: AuditEvent): Promise<void> {
    try {
      await sendOnce(this.opts.post, eventList([ev]), this.#timeoutMs);
      this.#failing = false;
    } catch (err) {
      this.opts.onError?.("webhook", 1);
      if (!this.#failing) {
        this.opts.logger.error(`audit webhook: cannot send an event: ${message(err)}`);
      }
      this.#failing = true;
      if (this.strict && ev.stage === ("RequestReceived" satisfies Stage)) throw err;
    }
  }

  dropped(): number {
    return 0;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

class WebhookBatchBackend {
  readonly #post: WebhookPost;
  readonly #size: number;
  readonly #maxBatch: number;
  readonly #maxBytes: number;
  readonly #maxWait: number;
  readonly #backoff: number;
  readonly #retries: number;
  readonly #timeout: number;
  readonly #closeTimeout: number;
  readonly #logger: Logger;
  readonly #onError?: AuditErrorCounter;
  #buffer: AuditEvent[] = [];
  #dropped = 0;
  #burst = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The oldest buffered event waited long enough. */
  #due = false;
  #sending: Promise<void> | undefined;
  #closed = false;
  /** Aborts the POST and backoff under way when close() runs out of time. */
  readonly #abort = new AbortController();
  /** Ends a backoff under way when close() starts. */
  readonly #wake = new AbortController();

  constructor(opts: WebhookBackendOptions) {
    this.#post = opts.post;
    this.#size = opts.bufferSize ?? 10_000;
    this.#maxBatch = opts.maxBatchSize ?? 400;
    this.#maxBytes = opts.maxBatchBytes ?? MAX_BATCH_BYTES;
    this.#maxWait = opts.maxWaitMs ?? 30_000;
    this.#backoff = opts.initialBackoffMs ?? 10_000;
    this.#retries = opts.retries ?? RETRIES;
    this.#timeout = opts.timeoutMs ?? 30_000;
    this.#closeTimeout = opts.closeTimeoutMs ?? 5_000;
    this.#logger = opts.logger;
    this.#onError = opts.onError;
  }

  process(ev: AuditEvent): void {
    if (this.#closed) return;
    if (this.#buffer.length >= this.#size) {
      this.#dropped++;
      this.#onError?.("buffered", 1);
      if (this.#burst++ === 0) {
        this.#logger.warn(
          `audit webhook: the batch buffer (${this.#size} events) is full: dropping events`,
        );
      }
      return;
    }
    if (this.#burst > 0) {
      this.#logger.warn(`audit webhook: dropped ${this.#burst} events while the buffer was full`);
      this.#burst = 0;
    }
    this.#buffer.push(ev);
    if (this.#buffer.length >= this.#maxBatch) this.#kick();
    else this.#arm();
  }

  dropped(): number {
    return this.#dropped;
  }

  /** Starts the max-wait timer of the oldest buffered event, unless running. */
  #arm(): void {
    if (this.#timer !== undefined || this.#buffer.length === 0 || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#due = true;
      this.#kick();
    }, this.#maxWait);
  }

  #kick(): void {
    this.#sending ??= this.#run();
  }

  async #run(): Promise<void> {
    try {
      while (
        this.#buffer.length > 0 &&
        (this.#buffer.length >= this.#maxBatch || this.#due || this.#closed)
      ) {
        if (this.#timer !== undefined) clearTimeout(this.#timer);
        this.#timer = undefined;
        this.#due = false;
        const events = this.#buffer.splice(0, this.#maxBatch);
        for (const body of this.#split(events)) {
          if (this.#abort.signal.aborted) break;
          await this.#send(body.text, body.count);
        }
        if (this.#abort.signal.aborted) break;
      }
    } finally {
      this.#sending = undefined;
      this.#arm();
    }
  }

  /** `events` as EventList bodies of at most maxBatchBytes each. */
  *#split(events: AuditEvent[]): Generator<{ text: string; count: number }> {
    const overhead = eventList([]).length;
    let items: string[] = [];
    let bytes = overhead;
    const body = () => ({
      text: eventList([]).slice(0, -2) + items.join(",") + "]}",
      count: items.length,
    });
    for (const ev of events) {
      const item = eventJson(ev);
      const size = byteLength(item);
      if (overhead + size > this.#maxBytes) {
        this.#logger.error(
          `audit webhook: dropping event ${ev.auditID} (${ev.stage}): ${size} bytes, more than ` +
            `a batch may carry (${this.#maxBytes})`,
        );
        this.#dropped++;
        this.#onError?.("webhook", 1);
        continue;
      }
      const add = size + (items.length > 0 ? 1 : 0);
      if (bytes + add > this.#maxBytes) {
        yield body();
        items = [];
        bytes = overhead;
      }
      bytes += size + (items.length > 0 ? 1 : 0);
      items.push(item);
    }
    if (items.length > 0) yield body();
  }

  /** POSTs one batch, trying again with exponential backoff; drops it when all fail. */
  async #send(body: string, count: number): Promise<void> {
    let wait = this.#backoff;
    let last: unknown;
    for (let attempt = 0; attempt <= this.#retries; attempt++) {
      if (attempt > 0) {
        // Closing: what is left goes out now, with no backoff to wait out.
        if (!this.#closed) await sleep(wait, this.#wake.signal);
        wait *= 2;
      }
      if (this.#abort.signal.aborted) break;
      // An attempt made while closing is the last one.
      const final = this.#closed;
      try {
        await sendOnce(this.#post, body, this.#timeout, this.#abort.signal);
        return;
      } catch (err) {
        last = err;
        if (attempt < this.#retries && !this.#closed) {
          this.#logger.warn(
            `audit webhook: sending ${count} events failed (${message(last)}), retrying in ` +
              `${wait}ms`,
          );
        }
      }
      if (final) break;
    }
    this.#dropped += count;
    this.#onError?.("webhook", count);
    this.#logger.error(`audit webhook: dropped a batch of ${count} events: ${message(last)}`);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#wake.abort();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<"late">((r) => {
      timer = setTimeout(() => r("late"), this.#closeTimeout);
    });
    try {
      while (this.#sending || this.#buffer.length > 0) {
        this.#kick();
        if ((await Promise.race([this.#sending, deadline])) === "late") {
          this.#abort.abort();
          await this.#sending;
          break;
        }
      }
    } finally {
      clearTimeout(timer);
    }
    const left = this.#buffer.length;
    if (left > 0) {
      this.#dropped += left;
      this.#buffer = [];
      this.#logger.error(`audit webhook: dropped ${left} events not sent at shutdown`);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

const encoder = new TextEncoder();
function byteLength(s: string): number {
  return encoder.encode(s).length;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
