/**
 * The tracer seam the server's code uses: spans with attributes and an end, the span a piece
 * of work runs under (carried across awaits), and the `traceparent` of that span for outbound
 * calls. Code below the server never holds a tracer: it asks for a child of the current span
 * ({@link childSpan}), which is a shared no-op span when nothing is traced, so that tracing
 * turned off costs one boolean test per call and allocates nothing.
 *
 * @module
 */

import { scopeContext } from "./scope_context.ts";

/** An attribute value as OTLP carries it here. */
export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue | undefined>;

/** One operation of a trace. */
export interface Span {
  /** False for the no-op span: callers may skip building attributes. */
  readonly recording: boolean;
  setAttribute(key: string, value: AttributeValue | undefined): void;
  /** Marks the span failed, with a short description (OTLP status ERROR). */
  fail(message: string): void;
  /** Ends the span, now or at `endTime` (ms since the epoch). Later calls do nothing. */
  end(endTime?: number): void;
  /** A child of this span (started now, or at `startTime`). */
  child(name: string, attributes?: Attributes, startTime?: number): Span;
  /** The header that makes a callee's spans children of this one; undefined for no-op. */
  traceparent(): string | undefined;
}

/** The span of nothing traced: every method does nothing. */
export const NOOP_SPAN: Span = {
  recording: false,
  setAttribute() {},
  fail() {},
  end() {},
  child: () => NOOP_SPAN,
  traceparent: () => undefined,
};

/**
 * The spans of one line of work (a request, a webhook call): the one current now. Opening a
 * scope makes a new async context mapping (scope_context.ts), so a request's work shares one:
 * its spans take turns as current in it ({@link withSpan}), and only work that may run beside
 * its siblings (a webhook call, {@link traced}) gets a scope of its own.
 */
interface Scope {
  current: Span;
}

const scopes = scopeContext<Scope>();

/** How many tracers are open in the process: while none is, nothing reads the context. */
let openTracers = 0;

/** Counts a tracer that opens (+1) or closes (-1); the tracer calls it. */
export function countOpenTracer(delta: 1 | -1): void {
  openTracers += delta;
}

/** The span the current work runs under; the no-op span when there is none. */
export function currentSpan(): Span {
  if (openTracers === 0) return NOOP_SPAN;
  return scopes.get()?.current ?? NOOP_SPAN;
}

/**
 * A child of the current span, started now; the no-op span when nothing is traced. The
 * caller ends it.
 */
export function childSpan(name: string, attributes?: Attributes): Span {
  if (openTracers === 0) return NOOP_SPAN;
  const parent = scopes.get()?.current;
  return parent ? parent.child(name, attributes) : NOOP_SPAN;
}

/**
 * Runs `fn` with `span` as the current span until what it returns settles (no context switch
 * for the no-op span). Outside any scope (a request's span) it opens one; inside, `span` is
 * current in the scope it is in, and the span before it again once `fn` is done (unless a
 * sibling has taken over meanwhile: work of one scope that overlaps may see a sibling's
 * span as current).
 */
export function withSpan<T>(span: Span, fn: () => T): T {
  if (!span.recording) return fn();
  const scope = scopes.get();
  if (!scope) return scopes.run({ current: span }, fn);
  const before = scope.current;
  scope.current = span;
  const restore = () => {
    if (scope.current === span) scope.current = before;
  };
  let result: T;
  try {
    result = fn();
  } catch (err) {
    restore();
    throw err;
  }
  if (!(result instanceof Promise)) {
    restore();
    return result;
  }
  return result.finally(restore) as T;
}

/**
 * Runs `fn` under a child span of the current one named `name`, ending it when `fn` settles
 * (failed when it throws). Nothing traced: just `fn()`.
 */
export function traced<T>(
  name: string,
  attributes: Attributes | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  const span = childSpan(name, attributes);
  if (!span.recording) return fn();
  return scopes.run({ current: span }, async () => {
    try {
      return await fn();
    } catch (err) {
      span.fail(err instanceof Error ? err.message : String(err));
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The `traceparent` of the current span, for an outbound call; undefined when not traced. */
export function currentTraceparent(): string | undefined {
  return currentSpan().traceparent();
}

/** Adds `traceparent` to outbound headers when the current work is traced. */
export function injectTraceparent(headers: Headers | Record<string, string>): void {
  const value = currentTraceparent();
  if (value === undefined) return;
  if (headers instanceof Headers) headers.set("traceparent", value);
  else headers.traceparent = value;
}
