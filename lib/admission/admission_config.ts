/**
 * The `--admission-control-config-file` (`AdmissionConfiguration`) and the admission settings
 * of a server: which plugins run and with what configuration.
 *
 * The file (`apiVersion: apiserver.config.platform.io/v1`, or kube's `apiserver.config.k8s.io/v1`
 * and `apiserver.k8s.io/v1alpha1`; YAML or JSON):
 *
 * ```yaml
 * apiVersion: apiserver.config.platform.io/v1
 * kind: AdmissionConfiguration
 * plugins:
 * - name: EventRateLimit
 *   path: eventratelimit.yaml        # relative to this file's directory
 * - name: ValidatingAdmissionWebhook
 *   configuration:                   # or inline
 *     apiVersion: apiserver.config.platform.io/v1
 *     kind: WebhookAdmissionConfiguration
 *     kubeConfigFile: /etc/platform/webhooks.kubeconfig
 * ```
 *
 * Each entry: `name` a plugin the server has, at most once; exactly one of `configuration` and
 * `path`. Configurations: EventRateLimit's `Configuration`
 * (`eventratelimit.admission.platform.io/v1alpha1`, or kube's `eventratelimit.admission.k8s.io`)
 * and the webhook plugins' `WebhookAdmissionConfiguration`; the other plugins take none.
 * Problems are reported all at once, each with the file and the field path, in kube's field
 * error words: `admission.yaml: plugins[0].configuration.limits[0].qps: Invalid value: 0: must
 * be positive`.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { type FieldError, fieldErrorMessage } from "../api/mod.ts";
import {
  ADMISSION_PLUGIN_NAMES,
  admissionPluginOverlap,
  checkAdmissionPluginName,
  ConfigError,
  describeValue,
  enabledAdmissionPlugins,
  formatIssueAsFieldError,
  osReason,
  parseYamlConfig,
  quote,
} from "../config/mod.ts";
import {
  DEFAULT_CACHE_SIZE,
  EVENT_RATE_LIMIT,
  type EventRateLimit,
  type EventRateLimitConfig,
  LIMIT_TYPES,
  type LimitType,
} from "./event_rate_limit.ts";
import { credentialsFor, readWebhookKubeconfig, webhookHostPort } from "./webhook_credentials.ts";
import type { WebhookCredentials } from "./webhook/client.ts";
import type { Webhook, WebhookType } from "./webhook/webhook.ts";

export const ADMISSION_CONFIG_API_VERSIONS = [
  "apiserver.config.platform.io/v1",
  "apiserver.config.k8s.io/v1",
  "apiserver.k8s.io/v1alpha1",
] as const;
export const ADMISSION_CONFIG_KIND = "AdmissionConfiguration";

export const EVENT_RATE_LIMIT_API_VERSIONS = [
  "eventratelimit.admission.platform.io/v1alpha1",
  "eventratelimit.admission.k8s.io/v1alpha1",
] as const;
export const EVENT_RATE_LIMIT_KIND = "Configuration";

export const WEBHOOK_ADMISSION_API_VERSIONS = [
  "apiserver.config.platform.io/v1",
  "apiserver.config.k8s.io/v1",
  "apiserver.k8s.io/v1alpha1",
] as const;
/** kube's v1 kind; its v1alpha1 `WebhookAdmission` is accepted too. */
export const WEBHOOK_ADMISSION_KIND = "WebhookAdmissionConfiguration";

const WEBHOOK_PLUGINS: Record<string, WebhookType> = {
  MutatingAdmissionWebhook: "mutating",
  ValidatingAdmissionWebhook: "validating",
};
const INT32_MAX = 2 ** 31 - 1;

/** Credentials for a webhook call (`WebhookClientOptions.credentials`). */
export type WebhookCredentialsResolver = (webhook: Webhook) => WebhookCredentials | undefined;

/** A validated AdmissionConfiguration. */
export interface AdmissionConfig {
  /** The plugins the file configures, in its order. */
  plugins: string[];
  eventRateLimit?: EventRateLimitConfig;
  /** Per webhook plugin, from its kubeconfig. */
  webhookCredentials: Partial<Record<WebhookType, WebhookCredentialsResolver>>;
}

/** A configuration without plugin settings. */
export const NO_ADMISSION_CONFIG: AdmissionConfig = { plugins: [], webhookCredentials: {} };

type Obj = Record<string, unknown>;

const pluginSchema = z.strictObject({
  name: z.string().optional(),
  configuration: z.looseObject({}).optional(),
  path: z.string().optional(),
});
const fileSchema = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  plugins: z.array(pluginSchema).optional(),
});
const limitSchema = z.strictObject({
  type: z.string().optional(),
  qps: z.number().optional(),
  burst: z.number().optional(),
  cacheSize: z.number().optional(),
});
const eventRateLimitSchema = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  limits: z.array(limitSchema).optional(),
});
const webhookAdmissionSchema = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  kubeConfigFile: z.string().optional(),
});

/** Problems found so far, each `path: message`. */
class Problems {
  readonly list: string[] = [];

  field(e: FieldError): void {
    this.list.push(fieldErrorMessage(e));
  }

  /** The schema's issues, each prefixed with `at`; whether there were any. */
  schema(result: z.ZodSafeParseResult<unknown>, data: unknown, at: string): boolean {
    if (result.success) return false;
    for (const issue of result.error.issues) {
      for (const line of formatIssueAsFieldError(issue, data)) this.list.push(join(at, line));
    }
    return true;
  }
}

/** `at.rest`, or `rest` at the top (`rest` may start with `[`). */
function join(at: string, rest: string): string {
  if (at === "") return rest;
  return rest.startsWith("[") || rest.startsWith(":") ? `${at}${rest}` : `${at}.${rest}`;
}

/** Options of {@link loadAdmissionConfig}. */
export interface LoadAdmissionConfigOptions {
  /** The directory a relative path resolves against. @default Deno.cwd() */
  cwd?: string;
}

/**
 * Read and validate an AdmissionConfiguration file and every plugin configuration it holds or
 * names (webhook kubeconfigs included).
 *
 * @throws {ConfigError} listing every problem, one per line, each naming the file and the
 * field, e.g. `admission.yaml: plugins[0].name: Unsupported value: "Foo": supported values: …`.
 */
export async function loadAdmissionConfig(
  path: string,
  opts: LoadAdmissionConfigOptions = {},
): Promise<AdmissionConfig> {
  const file = resolve(opts.cwd ?? Deno.cwd(), path);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    throw new ConfigError(
      `--admission-control-config-file: cannot read ${quote(path)}: ${osReason(err)}`,
    );
  }
  const data = parseYamlConfig(text, path);
  if (data === null || data === undefined) {
    throw new ConfigError(
      `${path}: the file is empty; expected apiVersion: ${ADMISSION_CONFIG_API_VERSIONS[0]} ` +
        `and kind: ${ADMISSION_CONFIG_KIND}`,
    );
  }
  if (!isObj(data)) {
    throw new ConfigError(`${path}: expected a mapping, got ${describeValue(data)}`);
  }
  const problems = new Problems();
  const config = await checkFile(data, dirname(file), problems);
  if (problems.list.length > 0) {
    throw new ConfigError(problems.list.map((p) => `${path}: ${p}`).join("\n"));
  }
  return config;
}

async function checkFile(data: Obj, base: string, problems: Problems): Promise<AdmissionConfig> {
  const out: AdmissionConfig = { plugins: [], webhookCredentials: {} };
  if (problems.schema(fileSchema.safeParse(data), data, "")) return out;
  checkTypeMeta(data, "", ADMISSION_CONFIG_API_VERSIONS, [ADMISSION_CONFIG_KIND], problems);
  const plugins = (data.plugins ?? []) as Obj[];
  const seen = new Set<string>();
  for (const [i, plugin] of plugins.entries()) {
    const at = `plugins[${i}]`;
    const { name, configuration, path } = plugin as {
      name?: string;
      configuration?: Obj;
      path?: string;
    };
    if (name === undefined || name === "") {
      problems.field({ type: "Required", field: `${at}.name` });
      continue;
    }
    if (!(ADMISSION_PLUGIN_NAMES as readonly string[]).includes(name)) {
      problems.field({
        type: "NotSupported",
        field: `${at}.name`,
        value: name,
        detail: supported(ADMISSION_PLUGIN_NAMES),
      });
      continue;
    }
    if (seen.has(name)) {
      problems.field({ type: "Duplicate", field: `${at}.name`, value: name });
      continue;
    }
    seen.add(name);
    out.plugins.push(name);
    if (configuration !== undefined && path !== undefined) {
      problems.field({
        type: "Invalid",
        field: at,
        value: name,
        detail: "give configuration or path, not both",
      });
      continue;
    }
    if (configuration === undefined && path === undefined) {
      problems.field({ type: "Required", field: at, detail: "configuration or path" });
      continue;
    }
    if (name !== EVENT_RATE_LIMIT && !(name in WEBHOOK_PLUGINS)) {
      problems.field({
        type: "Invalid",
        field: `${at}.name`,
        value: name,
        detail: "this plugin takes no configuration",
      });
      continue;
    }
    // The plugin's configuration, and how its problems are placed.
    let pluginData: Obj;
    let inner: Problems;
    let report: () => void;
    if (configuration !== undefined) {
      pluginData = configuration;
      inner = new Problems();
      report = () => problems.list.push(...inner.list.map((p) => join(`${at}.configuration`, p)));
    } else {
      if (path === "") {
        problems.field({ type: "Required", field: `${at}.path` });
        continue;
      }
      const full = isAbsolute(path!) ? path! : resolve(base, path!);
      let loaded: unknown;
      try {
        loaded = parseYamlConfig(await Deno.readTextFile(full), quote(path));
      } catch (err) {
        const why = err instanceof ConfigError ? err.message : `cannot read: ${osReason(err)}`;
        problems.list.push(`${at}.path: ${quote(path)}: ${why}`);
        continue;
      }
      if (!isObj(loaded)) {
        problems.list.push(`${at}.path: ${quote(path)}: expected a mapping`);
        continue;
      }
      pluginData = loaded;
      inner = new Problems();
      report = () =>
        problems.list.push(...inner.list.map((p) => `${at}.path: ${quote(path)}: ${p}`));
    }
    if (name === EVENT_RATE_LIMIT) {
      const erl = checkEventRateLimit(pluginData, inner);
      if (erl) out.eventRateLimit = erl;
    } else {
      const resolver = await checkWebhookAdmission(pluginData, inner);
      if (resolver) out.webhookCredentials[WEBHOOK_PLUGINS[name]] = resolver;
    }
    report();
  }
  return out;
}

/** An `eventratelimit.admission.platform.io/v1alpha1` Configuration, or undefined (reported). */
function checkEventRateLimit(
  data: Obj,
  problems: Problems,
): EventRateLimitConfig | undefined {
  if (problems.schema(eventRateLimitSchema.safeParse(data), data, "")) return undefined;
  const before = problems.list.length;
  checkTypeMeta(data, "", EVENT_RATE_LIMIT_API_VERSIONS, [EVENT_RATE_LIMIT_KIND], problems);
  const limits = data.limits as Obj[] | undefined;
  if (limits === undefined) {
    problems.field({ type: "Required", field: "limits" });
    return undefined;
  }
  if (limits.length === 0) {
    problems.field({ type: "Invalid", field: "limits", value: [], detail: "must not be empty" });
  }
  const out: EventRateLimit[] = [];
  for (const [i, limit] of limits.entries()) {
    const at = `limits[${i}]`;
    const type = limit.type as string | undefined;
    if (type === undefined || type === "") {
      problems.field({ type: "Required", field: `${at}.type` });
    } else if (!(LIMIT_TYPES as readonly string[]).includes(type)) {
      problems.field({
        type: "NotSupported",
        field: `${at}.type`,
        value: type,
        detail: supported(LIMIT_TYPES),
      });
    }
    const qps = int32(limit, "qps", at, problems, "positive");
    const burst = int32(limit, "burst", at, problems, "positive");
    const cacheSize = type === "Server"
      ? 0
      : int32(limit, "cacheSize", at, problems, "non-negative") ?? 0;
    out.push({
      type: type as LimitType,
      qps: qps!,
      burst: burst!,
      cacheSize: cacheSize || DEFAULT_CACHE_SIZE,
    });
  }
  return problems.list.length > before ? undefined : { limits: out };
}

/** An int32 field: required when `positive`, else defaulting to 0 when absent. */
function int32(
  limit: Obj,
  field: string,
  at: string,
  problems: Problems,
  sign: "positive" | "non-negative",
): number | undefined {
  const value = limit[field] as number | undefined;
  const where = `${at}.${field}`;
  if (value === undefined) {
    if (sign === "positive") problems.field({ type: "Required", field: where });
    return undefined;
  }
  if (!Number.isInteger(value)) {
    problems.field({ type: "Invalid", field: where, value, detail: "must be an integer" });
  } else if (sign === "positive" && value <= 0) {
    problems.field({ type: "Invalid", field: where, value, detail: "must be positive" });
  } else if (sign === "non-negative" && value < 0) {
    problems.field({ type: "Invalid", field: where, value, detail: "must not be negative" });
  } else if (value > INT32_MAX) {
    problems.field({
      type: "Invalid",
      field: where,
      value,
      detail: `must not be greater than ${INT32_MAX}`,
    });
  } else return value;
  return undefined;
}

/** A WebhookAdmissionConfiguration: the credentials of its kubeconfig, or undefined. */
async function checkWebhookAdmission(
  data: Obj,
  problems: Problems,
): Promise<WebhookCredentialsResolver | undefined> {
  if (problems.schema(webhookAdmissionSchema.safeParse(data), data, "")) return undefined;
  const before = problems.list.length;
  checkTypeMeta(
    data,
    "",
    WEBHOOK_ADMISSION_API_VERSIONS,
    [WEBHOOK_ADMISSION_KIND, "WebhookAdmission"],
    problems,
  );
  const file = data.kubeConfigFile as string | undefined;
  if (file === undefined || file === "") {
    problems.field({ type: "Required", field: "kubeConfigFile" });
    return undefined;
  }
  if (!isAbsolute(file)) {
    problems.field({
      type: "Invalid",
      field: "kubeConfigFile",
      value: file,
      detail: "must be an absolute file path",
    });
    return undefined;
  }
  try {
    const kubeconfig = await readWebhookKubeconfig(file);
    if (problems.list.length > before) return undefined;
    return (webhook) => {
      let hostPort: string;
      try {
        hostPort = webhookHostPort(webhook.clientConfig.url);
      } catch {
        return undefined; // The call fails on its URL.
      }
      return credentialsFor(kubeconfig, hostPort);
    };
  } catch (err) {
    problems.list.push(`kubeConfigFile: ${quote(file)}: ${(err as Error).message}`);
    return undefined;
  }
}

function checkTypeMeta(
  data: Obj,
  at: string,
  versions: readonly string[],
  kinds: readonly string[],
  problems: Problems,
): void {
  const { apiVersion, kind } = data as { apiVersion?: string; kind?: string };
  if (apiVersion === undefined || apiVersion === "") {
    problems.field({
      type: "Required",
      field: join(at, "apiVersion"),
      detail: supported(versions),
    });
  } else if (!versions.includes(apiVersion)) {
    problems.field({
      type: "NotSupported",
      field: join(at, "apiVersion"),
      value: apiVersion,
      detail: supported(versions),
    });
  }
  if (kind === undefined || kind === "") {
    problems.field({ type: "Required", field: join(at, "kind"), detail: supported(kinds) });
  } else if (!kinds.includes(kind)) {
    problems.field({
      type: "NotSupported",
      field: join(at, "kind"),
      value: kind,
      detail: supported(kinds),
    });
  }
}

function supported(values: readonly string[]): string {
  return `supported values: ${values.map((v) => JSON.stringify(v)).join(", ")}`;
}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------
// The server's admission settings

/** Which admission plugins run, and their configurations. */
export interface AdmissionSettings {
  /** The plugins that run, in kube's order. */
  enabled: string[];
  config: AdmissionConfig;
}

/** What {@link loadAdmissionSettings} reads: the flags' values. */
export interface AdmissionOptions {
  /** `--enable-admission-plugins`. */
  enable?: readonly string[];
  /** `--disable-admission-plugins`. */
  disable?: readonly string[];
  /** `--admission-control-config-file`. */
  configFile?: string;
}

/**
 * The admission settings of a server: the plugin lists checked (known names, none both enabled
 * and disabled), the configuration file loaded, and every enabled plugin that needs a
 * configuration given one (EventRateLimit, as in kube).
 *
 * @throws {ConfigError} naming the flag or the file and field.
 */
export async function loadAdmissionSettings(opts: AdmissionOptions): Promise<AdmissionSettings> {
  const enable = opts.enable ?? [];
  const disable = opts.disable ?? [];
  for (const [flag, names] of [["enable", enable], ["disable", disable]] as const) {
    for (const name of names) {
      try {
        checkAdmissionPluginName(name);
      } catch (err) {
        throw ConfigError.at(`--${flag}-admission-plugins`, err);
      }
    }
  }
  const both = admissionPluginOverlap(enable, disable);
  if (both !== undefined) {
    throw new ConfigError(
      `--disable-admission-plugins: ${quote(both)} is also in --enable-admission-plugins ` +
        "(a plugin is enabled or disabled, not both)",
    );
  }
  const config = opts.configFile === undefined
    ? NO_ADMISSION_CONFIG
    : await loadAdmissionConfig(opts.configFile);
  const enabled = enabledAdmissionPlugins(enable, disable);
  if (enabled.includes(EVENT_RATE_LIMIT) && !config.eventRateLimit) {
    throw new ConfigError(
      opts.configFile === undefined
        ? "--enable-admission-plugins: EventRateLimit needs a configuration: give " +
          "--admission-control-config-file with a plugins entry for it"
        : `${opts.configFile}: plugins: EventRateLimit is enabled and needs an entry here`,
    );
  }
  return { enabled, config };
}
