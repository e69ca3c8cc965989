/**
 * The two sources of settings, flags and the configuration file, each parsed into a
 * {@link Layer} of values keyed by configuration-file field, with the text each value was
 * written as and where it came from (`--tls-cert-file`, `config.yaml: tlsCertFile`) for
 * messages. Both use the value parsers of `value_parsers.ts`; relative paths resolve against
 * the working directory (flags) or the file's directory (the file). `server_config.ts` merges
 * the layers over the defaults.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import { isDNS1123Label, isDNS1123Subdomain } from "../api/mod.ts";
import { ConfigError, osReason, quote } from "./config_error.ts";
import { FLAGS } from "./flag_table.ts";
import {
  parseBool,
  parseByteCount,
  parseCount,
  parseDuration,
  parseEnum,
  parseHost,
  parsePort,
  parseSan,
  splitList,
} from "./value_parsers.ts";
import { checkFeatureGate, parseFeatureGates } from "./feature_gates.ts";
import { normalizeRuntimeConfigKey, parseRuntimeConfig } from "./runtime_config.ts";
import { describeValue, fieldPath } from "./schema_issues.ts";
import { parseNodePortRange, parseServiceClusterIPRange } from "./service_network.ts";
import { parseYamlConfig } from "./yaml_file.ts";
import { parseControllerEntry } from "./controller_selection.ts";
import { checkAdmissionPluginName } from "./admission_plugins.ts";
import {
  AUDIT_LOG_MODES,
  CONFIG_API_VERSION,
  CONFIG_KIND,
  LOG_LEVELS,
  type ServerConfig,
  STORAGE_BACKENDS,
} from "./server_config_fields.ts";
import {
  type Field,
  FIELDS,
  type FileConfig,
  fileSchema,
  issueMessage,
} from "./config_file_schema.ts";

/** One source of settings: flags or the file. Values are parsed; `where` names a field. */
export interface Layer {
  values: Partial<Settings>;
  /** Raw path strings as written, for messages. */
  shown: Partial<Record<Field, string>>;
  where(field: Field): string;
}

/** What flags and the file set: one value per field, in its parsed form (ServerConfig's). */
export type Settings = Required<Pick<ServerConfig, Field>>;

export function flagOf(field: Field): string {
  return FLAGS.find((f) => f.field === field)!.name;
}

export function flagLayer(raw: Map<string, string[]>, cwd: string): Layer {
  const values: Partial<Settings> = {};
  const shown: Partial<Record<Field, string>> = {};
  for (const spec of FLAGS) {
    const occurrences = raw.get(spec.name);
    if (!occurrences || !spec.field) continue;
    const field = spec.field as Field;
    const last = occurrences[occurrences.length - 1];
    try {
      setFromText(values, field, spec.repeatable ? occurrences : [last], cwd);
    } catch (err) {
      throw ConfigError.at(`--${spec.name}`, err);
    }
    shown[field] = last;
  }
  return { values, shown, where: (field) => `--${flagOf(field)}` };
}

/** Parse the text form of a field (flag values; also the string form of runtimeConfig). */
function setFromText(values: Partial<Settings>, field: Field, texts: string[], base: string) {
  const one = texts[texts.length - 1];
  switch (field) {
    case "dataDir":
    case "tlsCertFile":
    case "tlsPrivateKeyFile":
    case "tokenAuthFile":
    case "basicAuthFile":
    case "authenticationConfig":
    case "authorizationConfig":
    case "admissionControlConfigFile":
    case "encryptionProviderConfig":
    case "clientCAFile":
    case "etcdCAFile":
    case "etcdCertFile":
    case "etcdKeyFile":
    case "snapshotDir":
    case "clusterSigningCertFile":
    case "clusterSigningKeyFile":
    case "clusterSigningApiserverClientCertFile":
    case "clusterSigningApiserverClientKeyFile":
    case "clusterSigningApiserverClientNodeagentCertFile":
    case "clusterSigningApiserverClientNodeagentKeyFile":
    case "clusterSigningNodeagentServingCertFile":
    case "clusterSigningNodeagentServingKeyFile":
    case "auditPolicyFile":
    case "auditWebhookConfigFile":
    case "tracingConfigFile":
    case "egressSelectorConfigFile":
    case "controllerManagerConfig":
      values[field] = parsePath(one, base);
      break;
    case "auditLogPath":
      values.auditLogPath = one === "-" ? "-" : parsePath(one, base);
      break;
    case "auditLogMode":
    case "auditWebhookMode":
      values[field] = parseEnum(one, AUDIT_LOG_MODES);
      break;
    case "anonymousAuth":
    case "kubernetesGroupNames":
    case "leaderElect":
      values[field] = parseBool(one);
      break;
    case "bindAddress":
      values.bindAddress = parseHost(one);
      break;
    case "securePort":
      values.securePort = parsePort(one);
      break;
    case "tlsSANs":
      values.tlsSANs = dedupe(texts.flatMap(splitList).map(parseSan));
      break;
    case "controllers":
      values.controllers = texts.flatMap(splitList).map(parseControllerEntry);
      break;
    case "enableAdmissionPlugins":
    case "disableAdmissionPlugins":
      values[field] = dedupe(texts.flatMap(splitList).map(checkAdmissionPluginName));
      break;
    case "runtimeConfig":
      values.runtimeConfig = new Map(texts.flatMap((t) => [...parseRuntimeConfig(t)]));
      break;
    case "featureGates":
      values.featureGates = new Map(texts.flatMap((t) => [...parseFeatureGates(t)]));
      break;
    case "storage":
      values.storage = parseEnum(one, STORAGE_BACKENDS);
      break;
    case "etcdServers":
      values.etcdServers = dedupe(texts.flatMap(splitList).map(parseEtcdServer));
      break;
    case "etcdPrefix":
      values.etcdPrefix = parseEtcdPrefix(one);
      break;
    case "etcdCountMetricPollPeriod":
      values.etcdCountMetricPollPeriod = parseDuration(one);
      break;
    case "etcdCompactionInterval":
    case "snapshotInterval":
      values[field] = parseDuration(one);
      break;
    case "leaderElectResourceName":
      values.leaderElectResourceName = parseObjectName(one, isDNS1123Subdomain);
      break;
    case "leaderElectResourceNamespace":
      values.leaderElectResourceNamespace = parseObjectName(one, isDNS1123Label);
      break;
    case "token":
      if (one.trim() === "") throw new Error("must not be empty");
      values.token = one;
      break;
    case "logLevel":
      values.logLevel = parseEnum(one, LOG_LEVELS);
      break;
    case "showHiddenMetricsForVersion":
      // The server checks that it is its previous minor version as it starts.
      if (!/^\d+\.\d+$/.test(one.trim())) {
        throw new Error(`${JSON.stringify(one)} is not a minor version (like "1.31")`);
      }
      values.showHiddenMetricsForVersion = one.trim();
      break;
    case "serviceClusterIPRange":
      values.serviceClusterIPRange = parseServiceClusterIPRange(one).map((r) => r.cidr).join(",");
      break;
    case "serviceNodePortRange": {
      const { min, max } = parseNodePortRange(one);
      values.serviceNodePortRange = `${min}-${max}`;
      break;
    }
    case "historyRetention":
    case "requestTimeout":
    case "leaderElectLeaseDuration":
    case "leaderElectRenewDeadline":
    case "leaderElectRetryPeriod":
    case "clusterSigningDuration":
    case "auditWebhookBatchMaxWait":
    case "auditWebhookInitialBackoff":
      values[field] = positiveDuration(one);
      break;
    case "shutdownTimeout":
      values.shutdownTimeout = parseDuration(one);
      break;
    case "maxRequestBodyBytes":
      values.maxRequestBodyBytes = parseByteCount(one);
      break;
    case "minRequestTimeout":
    case "maxRequestsInflight":
    case "maxMutatingRequestsInflight":
    case "maxConnections":
    case "maxConnectionsPerClient":
    case "workerMaxHeapMb":
    case "auditLogMaxage":
    case "auditLogMaxbackup":
    case "auditLogMaxsize":
      values[field] = parseCount(one);
      break;
    case "auditLogBatchBufferSize":
    case "auditWebhookBatchBufferSize":
    case "auditWebhookBatchMaxSize":
    case "snapshotRetention":
    case "workers":
      values[field] = positiveCount(one);
      break;
  }
}

/** An etcd client URL: `http(s)://host:port` (a bare `host:port` is taken as http). */
function parseEtcdServer(text: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`"${text}" is not a URL (http://host:port or https://host:port)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`"${text}": etcd servers are http:// or https:// URLs`);
  }
  if (!url.hostname) throw new Error(`"${text}" has no host`);
  return `${url.protocol}//${url.host}`;
}

/** An etcd key prefix: starts with "/", no trailing "/" (but "/" alone is fine). */
function parseEtcdPrefix(text: string): string {
  const t = text.trim();
  if (!t.startsWith("/")) throw new Error(`"${text}" must start with "/"`);
  return t.length > 1 ? t.replace(/\/+$/, "") : t;
}

/** A Lease's name (a DNS subdomain) or namespace (a DNS label), as the API would check it. */
function parseObjectName(text: string, problems: (s: string) => string[]): string {
  const [problem] = problems(text);
  if (problem !== undefined) throw new Error(`${quote(text)}: ${problem}`);
  return text;
}

function parsePath(text: string, base: string): string {
  if (text.trim() === "") throw new Error("must not be empty");
  return isAbsolute(text) ? resolve(text) : resolve(base, text);
}

function positiveDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0) throw new Error(`${quote(text)} must be longer than 0`);
  return ms;
}

function positiveCount(value: string | number): number {
  const n = parseCount(value);
  if (n <= 0) throw new Error(`${quote(String(value))} must be at least 1`);
  return n;
}

function dedupe(items: string[]): string[] {
  return [...new Set(items)];
}

// ---------------------------------------------------------------------------------------
// The file

export async function fileLayer(path: string, shownPath: string): Promise<Layer> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new ConfigError(`--config: cannot read ${quote(shownPath)}: ${osReason(err)}`);
  }
  const data = parseYamlConfig(text, shownPath);
  if (data === null || data === undefined) {
    throw new ConfigError(
      `${shownPath}: the file is empty; expected apiVersion: ${CONFIG_API_VERSION} and ` +
        `kind: ${CONFIG_KIND}`,
    );
  }
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(`${shownPath}: expected a mapping, got ${describeValue(data)}`);
  }
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    throw new ConfigError(`${shownPath}: ${issueMessage(parsed.error.issues[0], data)}`);
  }

  const base = dirname(path);
  const where = (field: Field) => `${shownPath}: ${field}`;
  const values: Partial<Settings> = {};
  const shown: Partial<Record<Field, string>> = {};
  const fileValues = parsed.data;
  for (const field of FIELDS as Field[]) {
    const value = fileValues[field];
    if (value === undefined) continue;
    try {
      setFromFile(values, field, value, base, (sub) => `${shownPath}: ${sub}`);
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw ConfigError.at(where(field), err);
    }
    if (typeof value === "string") shown[field] = value;
  }
  return { values, shown, where };
}

/** Parse one typed field of the file; errors inside maps and lists name the element. */
function setFromFile(
  values: Partial<Settings>,
  field: Field,
  value: NonNullable<FileConfig[Field]>,
  base: string,
  at: (path: string) => string,
) {
  switch (field) {
    case "securePort":
      values.securePort = parsePort(value as number);
      return;
    case "maxRequestBodyBytes":
      values.maxRequestBodyBytes = parseByteCount(value as number);
      return;
    case "minRequestTimeout":
    case "maxRequestsInflight":
    case "maxMutatingRequestsInflight":
    case "maxConnections":
    case "maxConnectionsPerClient":
    case "workerMaxHeapMb":
    case "auditLogMaxage":
    case "auditLogMaxbackup":
    case "auditLogMaxsize":
      values[field] = parseCount(value as number);
      return;
    case "auditLogBatchBufferSize":
    case "auditWebhookBatchBufferSize":
    case "auditWebhookBatchMaxSize":
    case "snapshotRetention":
    case "workers":
      values[field] = positiveCount(value as number);
      return;
    case "anonymousAuth":
    case "kubernetesGroupNames":
    case "leaderElect":
      values[field] = value as boolean;
      return;
    case "tlsSANs":
      values.tlsSANs = dedupe(
        (value as string[]).map((s, i) => elementOrThrow(() => parseSan(s), at(`tlsSANs[${i}]`))),
      );
      return;
    case "controllers":
      values.controllers = (value as string[]).map((s, i) =>
        elementOrThrow(() => parseControllerEntry(s.trim()), at(`controllers[${i}]`))
      );
      return;
    case "enableAdmissionPlugins":
    case "disableAdmissionPlugins":
      values[field] = dedupe(
        (value as string[]).map((s, i) =>
          elementOrThrow(() => checkAdmissionPluginName(s.trim()), at(`${field}[${i}]`))
        ),
      );
      return;
    case "featureGates": {
      const gates = new Map<string, boolean>();
      for (const [name, on] of Object.entries(value as Record<string, boolean>)) {
        elementOrThrow(() => checkFeatureGate(name, on), at(fieldPath(["featureGates", name])));
        gates.set(name, on);
      }
      values.featureGates = gates;
      return;
    }
    case "runtimeConfig": {
      if (typeof value === "string") {
        elementOrThrow(() => setFromText(values, field, [value], base), at("runtimeConfig"));
        return;
      }
      const rc = new Map<string, boolean>();
      for (const [key, on] of Object.entries(value as Record<string, boolean>)) {
        const k = elementOrThrow(
          () => normalizeRuntimeConfigKey(key),
          at(fieldPath(["runtimeConfig", key])),
        );
        rc.set(k, on);
      }
      values.runtimeConfig = rc;
      return;
    }
    default:
      setFromText(values, field, [value as string], base);
  }
}

function elementOrThrow<T>(fn: () => T, where: string): T {
  try {
    return fn();
  } catch (err) {
    throw ConfigError.at(where, err);
  }
}
