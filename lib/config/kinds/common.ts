/**
 * What every configuration kind of `lib/config/kinds/` shares: the {@link ConfigKind} shape
 * (kind, both apiVersion spellings, one `check` that validates and defaults a document), Go
 * durations as kube writes them (`1m0s`), the collection of kube field errors, and the three
 * component-base parts several kinds embed (client connection, leader election, debugging)
 * with their schemas, defaults and kube's validation.
 *
 * A check runs in three steps, as kube's decoding does: the shape (zod, strict: an unknown
 * field is an error), then the defaults, then the validation rules, which see the defaulted
 * object.
 *
 * @module
 */

import { z } from "zod";
import { type FieldError, fieldErrorMessage } from "../../api/mod.ts";
import { fieldPath, formatIssueAsFieldError, type SchemaIssue, valueAt } from "../schema_issues.ts";

/** A JSON object as read from YAML. */
export type Obj = Record<string, unknown>;

/** The outcome of checking one document: kube's field errors, and the defaulted object. */
export interface KindCheck {
  /** `path: Invalid value: …` lines; empty when the document is valid. */
  errors: string[];
  /** The document with every default applied (absent when its shape is wrong). */
  defaulted?: Obj;
}

/** One configuration kind: its name, the apiVersions it is read under, and its check. */
export interface ConfigKind {
  kind: string;
  /** The project's own spelling first (`*.platform.io`), then kube's (`*.k8s.io`). */
  apiVersions: readonly string[];
  check(doc: Obj): KindCheck;
}

// ---------------------------------------------------------------------------------------
// Field errors

/** kube's field.ErrorList: errors collected in order, printed as kube prints them. */
export class FieldErrors {
  /** Field errors, and lines already written (shape problems of nested args). */
  readonly list: (FieldError | string)[] = [];
  lines(lines: readonly string[]): void {
    this.list.push(...lines);
  }
  invalid(field: string, value: unknown, detail: string): void {
    this.list.push({ type: "Invalid", field, value, detail });
  }
  required(field: string, detail = ""): void {
    this.list.push({ type: "Required", field, detail });
  }
  duplicate(field: string, value: unknown): void {
    this.list.push({ type: "Duplicate", field, value });
  }
  forbidden(field: string, detail: string): void {
    this.list.push({ type: "Forbidden", field, detail });
  }
  notSupported(field: string, value: unknown, supported: readonly string[]): void {
    const detail = `supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}`;
    this.list.push({ type: "NotSupported", field, value, detail });
  }
  messages(): string[] {
    return this.list.map((e) => typeof e === "string" ? e : fieldErrorMessage(e));
  }
}

/** `a.b` joined as kube's field.Path does (an empty prefix is left out). */
export function child(path: string, name: string | number): string {
  if (typeof name === "number") return `${path}[${name}]`;
  return path === "" ? name : `${path}.${name}`;
}

/**
 * Parse `doc` with the strict schema; its issues as kube's field errors. The schema accepts
 * `apiVersion` and `kind`, which the dispatcher has already matched.
 */
export function parseShape<T>(
  schema: z.ZodType<T>,
  doc: unknown,
  at: { root: unknown; prefix: readonly PropertyKey[] } = { root: doc, prefix: [] },
): { ok: true; value: T } | { ok: false; errors: string[] } {
  const parsed = schema.safeParse(doc);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    errors: parsed.error.issues.flatMap((i) => {
      const issue = { ...i, path: [...at.prefix, ...i.path] };
      return numberOrMissing(issue, at.root) ?? formatIssueAsFieldError(issue, at.root);
    }),
  };
}

/**
 * The issues zod words its own way, in kube's words: a missing required field, a number that
 * is not an integer, an integer out of its Go type's range.
 */
function numberOrMissing(issue: SchemaIssue, root: unknown): string[] | undefined {
  const field = fieldPath(issue.path, { hyphens: false });
  const value = valueAt(root, issue.path);
  if (issue.code === "invalid_type" && value === undefined) {
    return [fieldErrorMessage({ type: "Required", field })];
  }
  if (issue.code === "invalid_type" && issue.expected === "int") {
    return [fieldErrorMessage({ type: "Invalid", field, value, detail: "must be an integer" })];
  }
  if (issue.code === "too_big" || issue.code === "too_small") {
    const bound = Number(issue.code === "too_big" ? issue.maximum : issue.minimum);
    const detail = Math.abs(bound) <= 2 ** 31
      ? "must be a 32-bit integer (-2147483648 to 2147483647)"
      : "must be a 64-bit integer";
    return [fieldErrorMessage({ type: "Invalid", field, value, detail })];
  }
  return undefined;
}

/** The check of a kind from its three steps: shape, defaults, validation. */
export function kindCheck<T>(
  schema: z.ZodType<T>,
  defaults: (value: T) => Obj,
  validate: (defaulted: Obj, errs: FieldErrors) => void,
): (doc: Obj) => KindCheck {
  return (doc) => {
    const shape = parseShape(schema, doc);
    if (!shape.ok) return { errors: shape.errors };
    const defaulted = defaults(shape.value);
    const errs = new FieldErrors();
    validate(defaulted, errs);
    return { errors: errs.messages(), defaulted };
  };
}

// ---------------------------------------------------------------------------------------
// Go durations (metav1.Duration)

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  "µs": 1e3,
  "μs": 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** A Go duration (`1h30m`, `-1s`, `0`, `1.5s`) in milliseconds; `undefined` if it is not one. */
export function parseGoDuration(text: string): number | undefined {
  const m = /^([-+]?)(.*)$/.exec(text)!;
  const body = m[2];
  if (body === "0") return 0;
  if (body === "") return undefined;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let ns = 0;
  let pos = 0;
  while (pos < body.length) {
    part.lastIndex = pos;
    const p = part.exec(body);
    if (!p) return undefined;
    ns += Number(p[1]) * UNIT_NS[p[2]];
    pos = part.lastIndex;
  }
  const ms = ns / 1e6;
  return m[1] === "-" ? -ms : ms;
}

/**
 * Milliseconds as Go's time.Duration prints them, which is how kube writes a defaulted
 * duration: `0s`, `500ms`, `15s`, `1m0s`, `8760h0m0s`.
 */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${trim(abs)}ms`;
  const h = Math.floor(abs / 3_600_000);
  const m = Math.floor((abs % 3_600_000) / 60_000);
  const s = trim((abs % 60_000) / 1000);
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

function trim(n: number): string {
  return String(Number(n.toFixed(9)));
}

/** A duration field: a string Go can parse (kube refuses the file otherwise). */
export const duration = z.string().check((ctx) => {
  if (parseGoDuration(ctx.value) === undefined) {
    ctx.issues.push({
      code: "custom",
      input: ctx.value,
      message: `Invalid value: ${JSON.stringify(ctx.value)}: time: invalid duration ` +
        JSON.stringify(ctx.value),
    });
  }
});

/** A duration as kube writes it after defaulting: `default` when absent or zero. */
export function defaultDuration(text: string | undefined, fallback: string): string {
  const ms = text === undefined ? 0 : parseGoDuration(text) ?? 0;
  return formatGoDuration(ms === 0 ? parseGoDuration(fallback)! : ms);
}

/** A duration as written, normalised (`1m` → `1m0s`); `0s` when absent. */
export function normalDuration(text: string | undefined): string {
  return formatGoDuration(text === undefined ? 0 : parseGoDuration(text) ?? 0);
}

/** Milliseconds of a (validated) duration field of a defaulted object. */
export function ms(text: unknown): number {
  return parseGoDuration(String(text)) ?? 0;
}

/** int32 and int64 fields. */
export const int32 = z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1);
export const int64 = z.number().int();

// ---------------------------------------------------------------------------------------
// component-base parts

export const clientConnectionSchema = z.strictObject({
  kubeconfig: z.string().optional(),
  acceptContentTypes: z.string().optional(),
  contentType: z.string().optional(),
  qps: z.number().optional(),
  burst: int32.optional(),
});
export type ClientConnection = z.infer<typeof clientConnectionSchema>;

/** Defaults of a client connection; a component passes its own qps and burst. */
export function defaultClientConnection(
  c: ClientConnection | undefined,
  rates: { qps: number; burst: number },
): Obj {
  return {
    kubeconfig: c?.kubeconfig ?? "",
    acceptContentTypes: c?.acceptContentTypes ?? "",
    contentType: c?.contentType || "application/vnd.kubernetes.protobuf",
    qps: c?.qps || rates.qps,
    burst: c?.burst || rates.burst,
  };
}

/** component-base's ValidateClientConnectionConfiguration. */
export function validateClientConnection(c: Obj, path: string, errs: FieldErrors): void {
  if ((c.burst as number) < 0) errs.invalid(child(path, "burst"), c.burst, "must be non-negative");
}

export const leaderElectionSchema = z.strictObject({
  leaderElect: z.boolean().optional(),
  leaseDuration: duration.optional(),
  renewDeadline: duration.optional(),
  retryPeriod: duration.optional(),
  resourceLock: z.string().optional(),
  resourceName: z.string().optional(),
  resourceNamespace: z.string().optional(),
});
export type LeaderElection = z.infer<typeof leaderElectionSchema>;

/** component-base's recommended leader election defaults; the lock's name is the component's. */
export function defaultLeaderElection(
  l: LeaderElection | undefined,
  names: { resourceName: string; resourceNamespace: string },
): Obj {
  return {
    leaderElect: l?.leaderElect ?? true,
    leaseDuration: defaultDuration(l?.leaseDuration, "15s"),
    renewDeadline: defaultDuration(l?.renewDeadline, "10s"),
    retryPeriod: defaultDuration(l?.retryPeriod, "2s"),
    resourceLock: l?.resourceLock || "leases",
    resourceName: l?.resourceName || names.resourceName,
    resourceNamespace: l?.resourceNamespace || names.resourceNamespace,
  };
}

/**
 * component-base's ValidateLeaderElectionConfiguration, then the rule kube-scheduler and
 * kube-controller-manager add: only the `leases` lock.
 */
export function validateLeaderElection(l: Obj, path: string, errs: FieldErrors): void {
  if (!l.leaderElect) return;
  const at = (name: string) => child(path, name);
  for (const name of ["leaseDuration", "renewDeadline", "retryPeriod"]) {
    if (ms(l[name]) <= 0) errs.invalid(at(name), l[name], "must be greater than zero");
  }
  if (ms(l.leaseDuration) <= ms(l.renewDeadline)) {
    // kube shows the renew deadline here.
    errs.invalid(at("leaseDuration"), l.renewDeadline, "must be greater than `RenewDeadline`");
  }
  // (An empty lock, name or namespace is defaulted, so kube's Required errors cannot occur.)
  if (l.resourceLock !== "leases") {
    errs.invalid(at("resourceLock"), l.resourceLock, 'resourceLock value must be "leases"');
  }
}

export const debuggingSchema = z.strictObject({
  enableProfiling: z.boolean().optional(),
  enableContentionProfiling: z.boolean().optional(),
});

/** The `*`, `foo`, `-foo` selection lists (controllers, webhooks): each entry's problem. */
export function validateSelection(
  entries: readonly string[],
  path: string,
  known: ReadonlySet<string>,
  errs: FieldErrors,
  what: string,
): void {
  entries.forEach((entry, i) => {
    if (entry === "*") return;
    const name = entry.replace(/^-/, "");
    if (!known.has(name)) {
      errs.invalid(
        child(path, i),
        entry,
        `${JSON.stringify(name)} is not in the list of known ${what}`,
      );
    }
  });
}
