/**
 * The `--authorization-config` file (`AuthorizationConfiguration`, spec 03): an ordered list of
 * authorizers, loaded and validated as kube-apiserver does, with every problem reported at once.
 *
 * Accepted `apiVersion`s: `apiserver.platform.io/v1beta1` and `/v1`, and kube's own
 * `apiserver.config.k8s.io/v1beta1` and `/v1`, so that files written for kube work unchanged.
 * The file is YAML or JSON; unknown fields are errors (kube decodes these files strictly).
 *
 * Rules, as kube's validation unless noted:
 * - `authorizers`: at least one; `type` one of `RBAC`, `Webhook`, `AlwaysAllow`, `AlwaysDeny`
 *   (kube's `Node` is not supported here), only `Webhook` may repeat; `name` a DNS-1123 label
 *   (the spec's rule; kube allows a subdomain), unique; `webhook` given iff `type: Webhook`.
 * - `webhook`: `timeout` > 0s and <= 30s; `authorizedTTL` and `unauthorizedTTL` > 0s;
 *   `subjectAccessReviewVersion` `v1` or `v1beta1`; `matchConditionSubjectAccessReviewVersion`
 *   `v1`, required when there are match conditions (as kube; it may be left out otherwise);
 *   `failurePolicy` `NoOpinion` or `Deny`; `connectionInfo.type` `KubeConfigFile` (with
 *   `kubeConfigFile`, a readable, valid kubeconfig) or `InClusterConfig` (without it; the pod's
 *   service account must be there); `matchConditions` at most 64, each `expression` non-empty,
 *   unique and compiling to a bool in the `request` CEL environment.
 * - A relative `kubeConfigFile` resolves against this file's directory (kube requires an
 *   absolute path; accepting both keeps every kube file valid).
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import {
  ConfigError,
  describeValue,
  formatIssue,
  type IssueFormat,
  parseDuration,
  parseYamlConfig,
  quote,
  readConfigFile,
  similarField,
} from "../config/mod.ts";
import { CelCompileError, compile, type CompiledExpression } from "../cel/mod.ts";
import {
  connectionFromKubeconfig,
  inClusterConnection,
  type InClusterSource,
  type WebhookConnection,
} from "./webhook_connection.ts";

export const AUTHORIZATION_CONFIG_API_VERSIONS = [
  "apiserver.platform.io/v1beta1",
  "apiserver.platform.io/v1",
  "apiserver.config.k8s.io/v1beta1",
  "apiserver.config.k8s.io/v1",
] as const;
export const AUTHORIZATION_CONFIG_KIND = "AuthorizationConfiguration";

export const AUTHORIZER_TYPES = ["RBAC", "Webhook", "AlwaysAllow", "AlwaysDeny"] as const;
export type AuthorizerType = typeof AUTHORIZER_TYPES[number];

/** A validated authorization configuration: the authorizers, in the order they are asked. */
export interface AuthorizationConfig {
  authorizers: AuthorizerConfig[];
}

export type AuthorizerConfig =
  | { type: "Webhook"; name: string; webhook: WebhookConfig }
  | { type: Exclude<AuthorizerType, "Webhook">; name: string };

/** A validated webhook: durations in milliseconds, connection resolved, conditions compiled. */
export interface WebhookConfig {
  authorizedTTL: number;
  unauthorizedTTL: number;
  timeout: number;
  subjectAccessReviewVersion: "v1" | "v1beta1";
  failurePolicy: "NoOpinion" | "Deny";
  connection: WebhookConnection;
  /** All must be true for the webhook to be called; empty matches every request. */
  matchConditions: CompiledExpression[];
}

/** Options of {@link loadAuthorizationConfig}. */
export interface LoadAuthorizationConfigOptions {
  /** The directory a relative `path` resolves against. @default Deno.cwd() */
  cwd?: string;
  /** Where `InClusterConfig` connections read their settings. */
  inCluster?: InClusterSource;
}

const MAX_TIMEOUT_MS = 30_000;
const MAX_MATCH_CONDITIONS = 64;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DURATION_FIELDS = new Set(["authorizedTTL", "unauthorizedTTL", "timeout"]);

// The file's shape and primitive types; meaning is checked afterwards, on the same data, so that
// one pass reports shape and meaning problems together.
const connectionInfoSchema = z.strictObject({
  type: z.string(),
  kubeConfigFile: z.string().optional(),
});
const matchConditionSchema = z.strictObject({ expression: z.string() });
const webhookSchema = z.strictObject({
  authorizedTTL: z.string(),
  unauthorizedTTL: z.string(),
  timeout: z.string(),
  subjectAccessReviewVersion: z.string(),
  matchConditionSubjectAccessReviewVersion: z.string().optional(),
  failurePolicy: z.string(),
  connectionInfo: connectionInfoSchema,
  matchConditions: z.array(matchConditionSchema).optional(),
});
const authorizerSchema = z.strictObject({
  type: z.string(),
  name: z.string(),
  webhook: webhookSchema.optional(),
});
const fileSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  authorizers: z.array(authorizerSchema),
});
/** The fields of each object, by the field (list) holding it; `""` is the file. */
const FIELDS_IN: Record<string, string[]> = {
  "": Object.keys(fileSchema.shape),
  authorizers: Object.keys(authorizerSchema.shape),
  webhook: Object.keys(webhookSchema.shape),
  connectionInfo: Object.keys(connectionInfoSchema.shape),
  matchConditions: Object.keys(matchConditionSchema.shape),
};

type Obj = Record<string, unknown>;

/**
 * Read, validate and resolve an `AuthorizationConfiguration` file: parses it, checks every
 * field, reads each webhook's kubeconfig (or in-cluster settings) and compiles the match
 * conditions.
 *
 * @throws {ConfigError} listing every problem, one per line, each naming the file and the
 * field, e.g. `authz.yaml: authorizers[1].webhook.timeout: "45s" must be > 0s and <= 30s`.
 * @example
 * ```ts
 * const cfg = await loadAuthorizationConfig("/etc/platform/authz.yaml");
 * const authorizer = buildAuthorizer(cfg, { rbac: () => rbacAuthorizer });
 * ```
 */
export async function loadAuthorizationConfig(
  path: string,
  opts: LoadAuthorizationConfigOptions = {},
): Promise<AuthorizationConfig> {
  const file = resolve(opts.cwd ?? Deno.cwd(), path);
  const text = await readConfigFile("--authorization-config", path, file);
  const data = parseYamlConfig(text, path);
  if (data === null || data === undefined) {
    throw new ConfigError(
      `${path}: the file is empty; expected apiVersion: ${AUTHORIZATION_CONFIG_API_VERSIONS[0]} ` +
        `and kind: ${AUTHORIZATION_CONFIG_KIND}`,
    );
  }
  if (!isObj(data)) {
    throw new ConfigError(`${path}: expected a mapping, got ${describeValue(data)}`);
  }

  const errors: string[] = [];
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) errors.push(...formatIssue(issue, data, ISSUE_FORMAT));
  }
  const checker = new Checker(dirname(file), opts.inCluster ?? {});
  const config = await checker.file(data);
  errors.push(...checker.errors);
  if (errors.length > 0) {
    throw new ConfigError(errors.map((e) => `${path}: ${e}`).join("\n"));
  }
  return config;
}

/** Checks the meaning of fields whose shape is right (shape errors come from the schema). */
class Checker {
  readonly errors: string[] = [];

  constructor(readonly base: string, readonly inCluster: InClusterSource) {}

  error(at: string, message: string): void {
    this.errors.push(`${at}: ${message}`);
  }

  async file(data: Obj): Promise<AuthorizationConfig> {
    const { apiVersion, kind, authorizers } = data;
    if (typeof apiVersion === "string" && !oneOf(apiVersion, AUTHORIZATION_CONFIG_API_VERSIONS)) {
      this.error("apiVersion", notOneOf(apiVersion, AUTHORIZATION_CONFIG_API_VERSIONS));
    }
    if (typeof kind === "string" && kind !== AUTHORIZATION_CONFIG_KIND) {
      this.error("kind", `expected ${quote(AUTHORIZATION_CONFIG_KIND)}, got ${quote(kind)}`);
    }
    if (!Array.isArray(authorizers)) return { authorizers: [] };
    if (authorizers.length === 0) this.error("authorizers", "at least one authorizer is required");

    const out: AuthorizerConfig[] = [];
    const typeSeenAt = new Map<string, number>();
    const nameSeenAt = new Map<string, number>();
    for (const [i, raw] of authorizers.entries()) {
      if (!isObj(raw)) continue;
      const at = `authorizers[${i}]`;
      const { type, name, webhook } = raw;
      if (typeof name === "string") {
        const first = nameSeenAt.get(name);
        if (name === "") this.error(`${at}.name`, "must not be empty");
        else if (first !== undefined) {
          this.error(`${at}.name`, `${quote(name)} is already the name of authorizers[${first}]`);
        } else if (name.length > 63 || !DNS_LABEL.test(name)) {
          this.error(
            `${at}.name`,
            `${quote(name)} is not a DNS-1123 label (at most 63 lower-case letters, digits ` +
              `and "-", starting and ending with a letter or digit)`,
          );
        }
        if (first === undefined) nameSeenAt.set(name, i);
      }
      if (typeof type !== "string") continue;
      if (type === "Node") {
        this.error(`${at}.type`, `"Node" is not supported by this server`);
        continue;
      }
      if (!oneOf(type, AUTHORIZER_TYPES)) {
        this.error(`${at}.type`, notOneOf(type, AUTHORIZER_TYPES));
        continue;
      }
      const first = typeSeenAt.get(type);
      if (first !== undefined && type !== "Webhook") {
        this.error(`${at}.type`, `${quote(type)} is already the type of authorizers[${first}]`);
        continue;
      }
      typeSeenAt.set(type, first ?? i);

      if (type !== "Webhook") {
        if (webhook !== undefined) this.error(`${at}.webhook`, "only allowed with type Webhook");
        if (typeof name === "string") out.push({ type, name });
      } else if (webhook === undefined) {
        this.error(`${at}.webhook`, "required with type Webhook");
      } else if (isObj(webhook)) {
        const checked = await this.webhook(webhook, `${at}.webhook`);
        if (checked && typeof name === "string") out.push({ type, name, webhook: checked });
      }
    }
    return { authorizers: out };
  }

  /** The webhook's settings, or `undefined` when some are wrong (reported). */
  async webhook(raw: Obj, at: string): Promise<WebhookConfig | undefined> {
    const before = this.errors.length;
    const timeout = this.duration(raw, "timeout", at, MAX_TIMEOUT_MS);
    const authorizedTTL = this.duration(raw, "authorizedTTL", at);
    const unauthorizedTTL = this.duration(raw, "unauthorizedTTL", at);
    const sarVersion = this.choice(raw, "subjectAccessReviewVersion", at, ["v1", "v1beta1"]);
    const failurePolicy = this.choice(raw, "failurePolicy", at, ["NoOpinion", "Deny"]);
    const conditions = Array.isArray(raw.matchConditions) ? raw.matchConditions : [];
    const mcVersion = raw.matchConditionSubjectAccessReviewVersion;
    if (mcVersion === undefined || mcVersion === "") {
      if (conditions.length > 0) {
        this.error(
          `${at}.matchConditionSubjectAccessReviewVersion`,
          "required when matchConditions are given",
        );
      }
    } else if (typeof mcVersion === "string" && mcVersion !== "v1") {
      this.error(`${at}.matchConditionSubjectAccessReviewVersion`, notOneOf(mcVersion, ["v1"]));
    }
    const matchConditions = this.matchConditions(conditions, `${at}.matchConditions`);
    const connection = isObj(raw.connectionInfo)
      ? await this.connection(raw.connectionInfo, `${at}.connectionInfo`)
      : undefined;
    if (this.errors.length > before || !connection) return undefined;
    return {
      timeout: timeout!,
      authorizedTTL: authorizedTTL!,
      unauthorizedTTL: unauthorizedTTL!,
      subjectAccessReviewVersion: sarVersion as "v1" | "v1beta1",
      failurePolicy: failurePolicy as "NoOpinion" | "Deny",
      connection,
      matchConditions,
    };
  }

  /** A duration > 0 (and <= `max`), in milliseconds. */
  duration(raw: Obj, field: string, at: string, max?: number): number | undefined {
    const text = raw[field];
    if (typeof text !== "string") return undefined;
    let ms: number;
    try {
      ms = parseDuration(text);
    } catch (err) {
      this.error(`${at}.${field}`, (err as Error).message);
      return undefined;
    }
    if (ms <= 0 || (max !== undefined && ms > max)) {
      const limit = max === undefined ? "" : ` and <= ${max / 1000}s`;
      this.error(`${at}.${field}`, `${quote(text)} must be > 0s${limit}`);
      return undefined;
    }
    return ms;
  }

  choice(raw: Obj, field: string, at: string, values: readonly string[]): string | undefined {
    const value = raw[field];
    if (typeof value !== "string") return undefined;
    if (value === "") this.error(`${at}.${field}`, `must not be empty (${oneOfText(values)})`);
    else if (!values.includes(value)) this.error(`${at}.${field}`, notOneOf(value, values));
    return value;
  }

  matchConditions(conditions: unknown[], at: string): CompiledExpression[] {
    if (conditions.length > MAX_MATCH_CONDITIONS) {
      this.error(
        at,
        `${conditions.length} conditions; at most ${MAX_MATCH_CONDITIONS} are allowed`,
      );
      return [];
    }
    const out: CompiledExpression[] = [];
    const seenAt = new Map<string, number>();
    for (const [i, condition] of conditions.entries()) {
      if (!isObj(condition) || typeof condition.expression !== "string") continue;
      const expression = condition.expression;
      const where = `${at}[${i}].expression`;
      const first = seenAt.get(expression);
      if (expression.trim() === "") {
        this.error(where, "must not be empty");
      } else if (first !== undefined) {
        this.error(where, `duplicates ${at}[${first}].expression`);
      } else {
        seenAt.set(expression, i);
        try {
          out.push(compile("request", expression, { expect: "bool" }));
        } catch (err) {
          this.error(where, celMessage(err));
        }
      }
    }
    return out;
  }

  async connection(raw: Obj, at: string): Promise<WebhookConnection | undefined> {
    const { type, kubeConfigFile } = raw;
    if (typeof type !== "string") return undefined;
    // kube's files say KubeConfigFile; the specification says KubeConfig: both mean a file.
    if (type === "KubeConfigFile" || type === "KubeConfig") {
      if (kubeConfigFile === undefined || kubeConfigFile === "") {
        this.error(`${at}.kubeConfigFile`, "required with type KubeConfigFile");
        return undefined;
      }
      if (typeof kubeConfigFile !== "string") return undefined;
      const path = isAbsolute(kubeConfigFile) ? kubeConfigFile : resolve(this.base, kubeConfigFile);
      try {
        return await connectionFromKubeconfig(path);
      } catch (err) {
        this.error(`${at}.kubeConfigFile`, (err as Error).message);
        return undefined;
      }
    }
    if (type === "InClusterConfig") {
      if (kubeConfigFile !== undefined) {
        this.error(`${at}.kubeConfigFile`, "only allowed with type KubeConfigFile");
        return undefined;
      }
      try {
        return await inClusterConnection(this.inCluster);
      } catch (err) {
        this.error(`${at}.type`, `InClusterConfig: ${(err as Error).message}`);
        return undefined;
      }
    }
    this.error(
      `${at}.type`,
      type === ""
        ? "must not be empty"
        : notOneOf(type, ["KubeConfigFile", "KubeConfig", "InClusterConfig"]),
    );
    return undefined;
  }
}

/** A compile error with where it is in the expression. */
function celMessage(err: unknown): string {
  if (!(err instanceof CelCompileError)) return `does not compile: ${(err as Error).message}`;
  const pos = err.position;
  const where = pos ? ` (line ${pos.line}, column ${pos.column})` : "";
  return `does not compile${where}: ${err.message}`;
}

/** How this file words its schema issues: `expected a string`, a duration field says so, and
 * an unknown field's hint is a field of the same object. */
const ISSUE_FORMAT: IssueFormat = {
  articles: true,
  suggest: (key, path) => {
    const holder = path.findLast((seg) => typeof seg === "string") ?? "";
    return similarField(key, FIELDS_IN[holder as string] ?? []);
  },
  expects: (path) => {
    const field = path.at(-1);
    return typeof field === "string" && DURATION_FIELDS.has(field)
      ? 'a duration such as "30s"'
      : undefined;
  },
};

function oneOf<T extends string>(value: string, values: readonly T[]): value is T {
  return (values as readonly string[]).includes(value);
}

function oneOfText(values: readonly string[]): string {
  return `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`;
}

function notOneOf(value: string, values: readonly string[]): string {
  return `${quote(value)} is not ${oneOfText(values)}`;
}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
