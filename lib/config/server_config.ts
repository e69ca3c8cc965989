/**
 * The server configuration: flags, one optional YAML file (`--config`) and defaults joined
 * into one validated {@link ServerConfig}. Flags override the file; the file overrides the
 * defaults. For the maps (`featureGates`, `runtimeConfig`) a flag overrides the file key by
 * key; lists and scalars are replaced whole.
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { parseYamlConfig } from "./yaml_file.ts";
import {
  ConfigError,
  FLAGS,
  formatFlagHelp,
  osReason,
  parseBool,
  parseByteCount,
  parseCount,
  parseDuration,
  parseEnum,
  parseHost,
  parsePort,
  parseSan,
  quote,
  splitList,
  tokenizeArgs,
} from "./flags.ts";
import {
  checkFeatureGate,
  featureGateHelpLines,
  parseFeatureGates,
  resolveFeatureGates,
} from "./feature_gates.ts";
import { normalizeRuntimeConfigKey, parseRuntimeConfig } from "./runtime_config.ts";
import {
  describeValue,
  fieldPath,
  formatIssue,
  type SchemaIssue,
  similarField,
  valueAt,
} from "./schema_issues.ts";
import {
  decodePem,
  SIGNER_APISERVER_CLIENT,
  SIGNER_APISERVER_CLIENT_NODEAGENT,
  SIGNER_NODEAGENT_SERVING,
} from "../api/mod.ts";
import { readKeyPair } from "./key_pair.ts";
import {
  DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  DEFAULT_SERVICE_NODE_PORT_RANGE,
  parseNodePortRange,
  parseServiceClusterIPRange,
} from "./service_network.ts";

// The path of a field as messages write it; its home is schema_issues.ts.
export { fieldPath };

/** The `apiVersion` of a configuration file. */
export const CONFIG_API_VERSION = "platform.io/v1alpha1";
/** The `kind` of a configuration file. */
export const CONFIG_KIND = "ServerConfiguration";

export const STORAGE_BACKENDS = ["file", "memory"] as const;
export type StorageBackend = typeof STORAGE_BACKENDS[number];
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = typeof LOG_LEVELS[number];

/**
 * The validated server configuration. Field names are the configuration file's; paths are
 * absolute and durations are milliseconds.
 */
export interface ServerConfig {
  /** The `--config` file, when one was given. */
  configFile?: string;
  dataDir: string;
  bindAddress: string;
  /** 0 = a free port. */
  securePort: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** Extra serving-certificate names, normalized (IPs canonical, DNS names lower-case). */
  tlsSANs: string[];
  tokenAuthFile?: string;
  /** AuthenticationConfiguration file (JWT issuers, anonymous access). */
  authenticationConfig?: string;
  /** The legacy anonymous switch, when set by a flag or the file (else anonymous is off, or
   * what the authentication configuration says). */
  anonymousAuth?: boolean;
  /** AuthorizationConfiguration file; absent: RBAC with system:masters as superusers. */
  authorizationConfig?: string;
  /** Discovery and OpenAPI also list each built-in group under its Kubernetes name. */
  kubernetesGroupNames: boolean;
  /** EncryptionConfiguration file; absent: values are stored in clear. */
  encryptionProviderConfig?: string;
  /** CA bundle verifying client certificates; given, client-certificate authentication is on. */
  clientCAFile?: string;
  /** One CA for every well-known signer (both or neither; default: the cluster CA). */
  clusterSigningCertFile?: string;
  clusterSigningKeyFile?: string;
  /** One CA per well-known signer (each pair both or neither; not with the two above). */
  clusterSigningApiserverClientCertFile?: string;
  clusterSigningApiserverClientKeyFile?: string;
  clusterSigningApiserverClientNodeagentCertFile?: string;
  clusterSigningApiserverClientNodeagentKeyFile?: string;
  clusterSigningNodeagentServingCertFile?: string;
  clusterSigningNodeagentServingKeyFile?: string;
  /** Longest lifetime of an issued certificate. Milliseconds. */
  clusterSigningDuration: number;
  /** Explicit runtime-config settings with normalized keys; see `isEnabled()`. */
  runtimeConfig: Map<string, boolean>;
  /** Every known feature gate with its effective value (defaults, AllAlpha/AllBeta applied). */
  featureGates: Map<string, boolean>;
  storage: StorageBackend;
  /** Milliseconds. */
  historyRetention: number;
  /** Controller selection in kube syntax, e.g. `["*", "-csrsigning"]`. */
  controllers: string[];
  /** Canonical CIDRs, comma-separated (one, or one per IP family). */
  serviceClusterIPRange: string;
  /** `min-max`. */
  serviceNodePortRange: string;
  /** Milliseconds. */
  shutdownTimeout: number;
  /** Milliseconds. */
  requestTimeout: number;
  /** Seconds. */
  minRequestTimeout: number;
  /** 0: no limit. */
  maxRequestsInflight: number;
  /** 0: no limit. */
  maxMutatingRequestsInflight: number;
  /** 0: derived from the open-file limit. */
  maxConnections: number;
  /** 0: half of maxConnections. */
  maxConnectionsPerClient: number;
  maxRequestBodyBytes: number;
  logLevel: LogLevel;
}

/** The values every field takes when neither a flag nor the file sets it. */
export const DEFAULTS = {
  dataDir: "./data",
  bindAddress: "127.0.0.1",
  securePort: 6443,
  kubernetesGroupNames: true,
  storage: "file" as StorageBackend,
  historyRetention: 5 * 60_000,
  controllers: ["*"],
  serviceClusterIPRange: DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  serviceNodePortRange: DEFAULT_SERVICE_NODE_PORT_RANGE,
  clusterSigningDuration: 8760 * 3_600_000,
  shutdownTimeout: 30_000,
  requestTimeout: 60_000,
  minRequestTimeout: 1800,
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  maxConnections: 0,
  maxConnectionsPerClient: 0,
  maxRequestBodyBytes: 3 * 1024 * 1024,
  logLevel: "info" as LogLevel,
} as const;

/** The per-signer CA fields of the configuration, with the well-known signer each is for. */
export const PER_SIGNER_CA_FIELDS = [
  {
    signer: SIGNER_APISERVER_CLIENT,
    cert: "clusterSigningApiserverClientCertFile",
    key: "clusterSigningApiserverClientKeyFile",
  },
  {
    signer: SIGNER_APISERVER_CLIENT_NODEAGENT,
    cert: "clusterSigningApiserverClientNodeagentCertFile",
    key: "clusterSigningApiserverClientNodeagentKeyFile",
  },
  {
    signer: SIGNER_NODEAGENT_SERVING,
    cert: "clusterSigningNodeagentServingCertFile",
    key: "clusterSigningNodeagentServingKeyFile",
  },
] as const;

/** A CA given as certificate and key files. */
export interface SigningFiles {
  certFile: string;
  keyFile: string;
}

/**
 * The signing CAs a configuration names, shaped as `startServer` takes them: `clusterSigning`
 * (one CA for every signer) or `clusterSigningPerSigner` (by signer name), or neither (the
 * cluster CA signs).
 */
export function clusterSigningFiles(cfg: ServerConfig): {
  clusterSigning?: SigningFiles;
  clusterSigningPerSigner?: Record<string, SigningFiles>;
} {
  if (cfg.clusterSigningCertFile !== undefined && cfg.clusterSigningKeyFile !== undefined) {
    return {
      clusterSigning: { certFile: cfg.clusterSigningCertFile, keyFile: cfg.clusterSigningKeyFile },
    };
  }
  const perSigner: Record<string, SigningFiles> = {};
  for (const { signer, cert, key } of PER_SIGNER_CA_FIELDS) {
    const certFile = cfg[cert];
    const keyFile = cfg[key];
    if (certFile !== undefined && keyFile !== undefined) perSigner[signer] = { certFile, keyFile };
  }
  return Object.keys(perSigner).length > 0 ? { clusterSigningPerSigner: perSigner } : {};
}

/** The `--help` flag list: every flag with its default, then the feature gates (no usage line). */
export function helpText(): string {
  return formatFlagHelp(featureGateHelpLines());
}

// ---------------------------------------------------------------------------------------
// The configuration file's schema: shape and primitive types only. Meaning (durations,
// addresses, gate names) is checked by the same parsers the flags use.

const fileSchema = z.strictObject({
  apiVersion: z.literal(CONFIG_API_VERSION),
  kind: z.literal(CONFIG_KIND),
  dataDir: z.string().optional(),
  bindAddress: z.string().optional(),
  securePort: z.number().optional(),
  tlsCertFile: z.string().optional(),
  tlsPrivateKeyFile: z.string().optional(),
  tlsSANs: z.array(z.string()).optional(),
  tokenAuthFile: z.string().optional(),
  authenticationConfig: z.string().optional(),
  anonymousAuth: z.boolean().optional(),
  kubernetesGroupNames: z.boolean().optional(),
  authorizationConfig: z.string().optional(),
  encryptionProviderConfig: z.string().optional(),
  clientCAFile: z.string().optional(),
  clusterSigningCertFile: z.string().optional(),
  clusterSigningKeyFile: z.string().optional(),
  clusterSigningApiserverClientCertFile: z.string().optional(),
  clusterSigningApiserverClientKeyFile: z.string().optional(),
  clusterSigningApiserverClientNodeagentCertFile: z.string().optional(),
  clusterSigningApiserverClientNodeagentKeyFile: z.string().optional(),
  clusterSigningNodeagentServingCertFile: z.string().optional(),
  clusterSigningNodeagentServingKeyFile: z.string().optional(),
  clusterSigningDuration: z.string().optional(),
  runtimeConfig: z.union([z.string(), z.record(z.string(), z.boolean())]).optional(),
  featureGates: z.record(z.string(), z.boolean()).optional(),
  storage: z.enum(STORAGE_BACKENDS).optional(),
  historyRetention: z.string().optional(),
  controllers: z.array(z.string()).optional(),
  serviceClusterIPRange: z.string().optional(),
  serviceNodePortRange: z.string().optional(),
  shutdownTimeout: z.string().optional(),
  requestTimeout: z.string().optional(),
  minRequestTimeout: z.number().optional(),
  maxRequestsInflight: z.number().optional(),
  maxMutatingRequestsInflight: z.number().optional(),
  maxConnections: z.number().optional(),
  maxConnectionsPerClient: z.number().optional(),
  maxRequestBodyBytes: z.number().optional(),
  logLevel: z.enum(LOG_LEVELS).optional(),
});

type FileConfig = z.infer<typeof fileSchema>;
/** A field of the configuration file (besides apiVersion and kind). */
type Field = Exclude<keyof FileConfig, "apiVersion" | "kind">;

/** The signing CA file fields: one CA for all, then one per signer. */
const SIGNING_FILE_FIELDS = [
  "clusterSigningCertFile",
  "clusterSigningKeyFile",
  ...PER_SIGNER_CA_FIELDS.flatMap(({ cert, key }) => [cert, key]),
] as const;

/** Optional path fields: absent from a `ServerConfig` when unset. */
const OPTIONAL_PATHS = [
  "tlsCertFile",
  "tlsPrivateKeyFile",
  "tokenAuthFile",
  "authenticationConfig",
  "authorizationConfig",
  "encryptionProviderConfig",
  "clientCAFile",
  ...SIGNING_FILE_FIELDS,
] as const;
type PathField = typeof OPTIONAL_PATHS[number];

const FIELDS = Object.keys(fileSchema.shape).filter((k) => k !== "apiVersion" && k !== "kind");

/** One source of settings: flags or the file. Values are parsed; `where` names a field. */
interface Layer {
  values: Partial<Settings>;
  /** Raw path strings as written, for messages. */
  shown: Partial<Record<Field, string>>;
  where(field: Field): string;
}

/** Parsed values keyed by configuration-file field. */
interface Settings {
  dataDir: string;
  bindAddress: string;
  securePort: number;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  tlsSANs: string[];
  tokenAuthFile: string;
  authenticationConfig: string;
  anonymousAuth: boolean;
  kubernetesGroupNames: boolean;
  authorizationConfig: string;
  encryptionProviderConfig: string;
  clientCAFile: string;
  clusterSigningCertFile: string;
  clusterSigningKeyFile: string;
  clusterSigningApiserverClientCertFile: string;
  clusterSigningApiserverClientKeyFile: string;
  clusterSigningApiserverClientNodeagentCertFile: string;
  clusterSigningApiserverClientNodeagentKeyFile: string;
  clusterSigningNodeagentServingCertFile: string;
  clusterSigningNodeagentServingKeyFile: string;
  clusterSigningDuration: number;
  runtimeConfig: Map<string, boolean>;
  featureGates: Map<string, boolean>;
  storage: StorageBackend;
  historyRetention: number;
  controllers: string[];
  serviceClusterIPRange: string;
  serviceNodePortRange: string;
  shutdownTimeout: number;
  requestTimeout: number;
  /** Seconds. */
  minRequestTimeout: number;
  /** 0: no limit. */
  maxRequestsInflight: number;
  /** 0: no limit. */
  maxMutatingRequestsInflight: number;
  /** 0: derived from the open-file limit. */
  maxConnections: number;
  /** 0: half of maxConnections. */
  maxConnectionsPerClient: number;
  maxRequestBodyBytes: number;
  logLevel: LogLevel;
}

/** Options of {@link loadServerConfig}. */
export interface LoadServerConfigOptions {
  /** The directory relative flag paths resolve against. @default Deno.cwd() */
  cwd?: string;
}

/**
 * Parse `platform serve` flags, read the `--config` file if given, and return the validated
 * configuration, or `{help}` when `--help`/`-h` is given. Reads only the files the
 * configuration names (to check that they exist and parse); writes nothing.
 *
 * @throws {ConfigError} whose message is the one line to print before exiting with status 2.
 * @example
 * ```ts
 * const cfg = await loadServerConfig(["--secure-port=0", "--feature-gates=WatchList=true"]);
 * if ("help" in cfg) console.log(cfg.help);
 * ```
 */
export async function loadServerConfig(
  argv: string[],
  opts: LoadServerConfigOptions = {},
): Promise<ServerConfig | { help: string }> {
  const cwd = opts.cwd ?? Deno.cwd();
  const args = tokenizeArgs(argv);
  if (args.help) return { help: helpText() };

  const flags = flagLayer(args.values, cwd);
  let file: Layer | undefined;
  let configFile: string | undefined;
  const configArg = args.values.get("config")?.at(-1);
  if (configArg !== undefined) {
    if (configArg.trim() === "") throw new ConfigError("--config: must not be empty");
    configFile = resolve(cwd, configArg);
    file = await fileLayer(configFile, configArg);
  }

  /** The layer that decided a field: flags, else the file, else none (default). */
  const from = (field: Field): Layer | undefined =>
    flags.values[field] !== undefined
      ? flags
      : file?.values[field] !== undefined
      ? file
      : undefined;
  const pick = <K extends Field>(field: K): Settings[K] | undefined =>
    (flags.values[field] ?? file?.values[field]) as Settings[K] | undefined;
  const merged = <K extends "featureGates" | "runtimeConfig">(field: K) =>
    new Map([...(file?.values[field] ?? []), ...(flags.values[field] ?? [])]);

  const cfg: ServerConfig = {
    configFile,
    dataDir: pick("dataDir") ?? resolve(cwd, DEFAULTS.dataDir),
    bindAddress: pick("bindAddress") ?? DEFAULTS.bindAddress,
    securePort: pick("securePort") ?? DEFAULTS.securePort,
    tlsCertFile: pick("tlsCertFile"),
    tlsPrivateKeyFile: pick("tlsPrivateKeyFile"),
    tlsSANs: pick("tlsSANs") ?? [],
    tokenAuthFile: pick("tokenAuthFile"),
    authenticationConfig: pick("authenticationConfig"),
    anonymousAuth: pick("anonymousAuth"),
    kubernetesGroupNames: pick("kubernetesGroupNames") ?? DEFAULTS.kubernetesGroupNames,
    authorizationConfig: pick("authorizationConfig"),
    encryptionProviderConfig: pick("encryptionProviderConfig"),
    clientCAFile: pick("clientCAFile"),
    ...Object.fromEntries(SIGNING_FILE_FIELDS.map((f) => [f, pick(f)])),
    clusterSigningDuration: pick("clusterSigningDuration") ?? DEFAULTS.clusterSigningDuration,
    runtimeConfig: merged("runtimeConfig"),
    featureGates: resolveFeatureGates(merged("featureGates")),
    storage: pick("storage") ?? DEFAULTS.storage,
    historyRetention: pick("historyRetention") ?? DEFAULTS.historyRetention,
    controllers: pick("controllers") ?? [...DEFAULTS.controllers],
    serviceClusterIPRange: pick("serviceClusterIPRange") ?? DEFAULTS.serviceClusterIPRange,
    serviceNodePortRange: pick("serviceNodePortRange") ?? DEFAULTS.serviceNodePortRange,
    shutdownTimeout: pick("shutdownTimeout") ?? DEFAULTS.shutdownTimeout,
    requestTimeout: pick("requestTimeout") ?? DEFAULTS.requestTimeout,
    minRequestTimeout: pick("minRequestTimeout") ?? DEFAULTS.minRequestTimeout,
    maxRequestsInflight: pick("maxRequestsInflight") ?? DEFAULTS.maxRequestsInflight,
    maxMutatingRequestsInflight: pick("maxMutatingRequestsInflight") ??
      DEFAULTS.maxMutatingRequestsInflight,
    maxConnections: pick("maxConnections") ?? DEFAULTS.maxConnections,
    maxConnectionsPerClient: pick("maxConnectionsPerClient") ?? DEFAULTS.maxConnectionsPerClient,
    maxRequestBodyBytes: pick("maxRequestBodyBytes") ?? DEFAULTS.maxRequestBodyBytes,
    logLevel: pick("logLevel") ?? DEFAULTS.logLevel,
  };
  if (cfg.configFile === undefined) delete cfg.configFile;
  for (const k of OPTIONAL_PATHS) {
    if (cfg[k] === undefined) delete cfg[k];
  }
  if (cfg.anonymousAuth === undefined) delete cfg.anonymousAuth;

  // Cross-field rules and the files the configuration points at.
  const where = (field: Field) => from(field)?.where(field) ?? `--${flagOf(field)}`;
  const shown = (field: Field) =>
    from(field)?.shown[field] ?? String(cfg[field as keyof ServerConfig]);
  /** How a message names another field: its field when the file set it, else its flag. */
  const named = (field: Field) => from(field) === file ? field : `--${flagOf(field)}`;
  const pairs: [PathField, PathField][] = [
    ["tlsCertFile", "tlsPrivateKeyFile"],
    ["clusterSigningCertFile", "clusterSigningKeyFile"],
    ...PER_SIGNER_CA_FIELDS.map(({ cert, key }): [PathField, PathField] => [cert, key]),
  ];
  // As kube: one CA for every signer, or one per signer, not both.
  if (cfg.clusterSigningCertFile !== undefined || cfg.clusterSigningKeyFile !== undefined) {
    const perSigner = PER_SIGNER_CA_FIELDS.flatMap(({ cert, key }) => [cert, key])
      .find((f) => cfg[f] !== undefined);
    if (perSigner !== undefined) {
      throw new ConfigError(
        `${where(perSigner)}: cannot be combined with ${named("clusterSigningCertFile")} and ` +
          `${named("clusterSigningKeyFile")} (give one CA for every signer, or one per signer)`,
      );
    }
  }
  for (const [certField, keyField] of pairs) {
    if ((cfg[certField] === undefined) !== (cfg[keyField] === undefined)) {
      const [given, missing] = cfg[certField] !== undefined
        ? [certField, keyField]
        : [keyField, certField];
      // The missing one is named as the given one was: a flag, or a field of the file.
      const other = from(given) === flags ? `--${flagOf(missing)}` : missing;
      throw new ConfigError(`${where(given)}: ${other} must be given too`);
    }
  }
  for (const [certField, keyField] of pairs) {
    const certFile = cfg[certField];
    const keyFile = cfg[keyField];
    if (certFile === undefined || keyFile === undefined) continue;
    await readKeyPair(
      { path: certFile, where: where(certField), shown: shown(certField) },
      { path: keyFile, where: where(keyField), shown: shown(keyField) },
    );
  }
  if (cfg.tokenAuthFile !== undefined) {
    await checkReadableFile(cfg.tokenAuthFile, where("tokenAuthFile"), shown("tokenAuthFile"));
  }
  for (
    const field of [
      "authenticationConfig",
      "authorizationConfig",
      "encryptionProviderConfig",
    ] as const
  ) {
    const path = cfg[field];
    if (path !== undefined) await checkReadableFile(path, where(field), shown(field));
  }
  if (cfg.clientCAFile !== undefined) {
    await checkCertificateBundle(
      cfg.clientCAFile,
      where("clientCAFile"),
      shown("clientCAFile"),
      // The cluster CA is generated on the first start: naming it before then is fine.
      cfg.clientCAFile === join(cfg.dataDir, "pki", "ca.crt"),
    );
  }
  await checkDirectoryOrAbsent(cfg.dataDir, where("dataDir"), shown("dataDir"));
  return cfg;
}

// ---------------------------------------------------------------------------------------
// Flags

function flagOf(field: Field): string {
  return FLAGS.find((f) => f.field === field)!.name;
}

function flagLayer(raw: Map<string, string[]>, cwd: string): Layer {
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
    case "authenticationConfig":
    case "authorizationConfig":
    case "encryptionProviderConfig":
    case "clientCAFile":
    case "clusterSigningCertFile":
    case "clusterSigningKeyFile":
    case "clusterSigningApiserverClientCertFile":
    case "clusterSigningApiserverClientKeyFile":
    case "clusterSigningApiserverClientNodeagentCertFile":
    case "clusterSigningApiserverClientNodeagentKeyFile":
    case "clusterSigningNodeagentServingCertFile":
    case "clusterSigningNodeagentServingKeyFile":
      values[field] = parsePath(one, base);
      break;
    case "anonymousAuth":
    case "kubernetesGroupNames":
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
    case "runtimeConfig":
      values.runtimeConfig = new Map(texts.flatMap((t) => [...parseRuntimeConfig(t)]));
      break;
    case "featureGates":
      values.featureGates = new Map(texts.flatMap((t) => [...parseFeatureGates(t)]));
      break;
    case "storage":
      values.storage = parseEnum(one, STORAGE_BACKENDS);
      break;
    case "logLevel":
      values.logLevel = parseEnum(one, LOG_LEVELS);
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
    case "clusterSigningDuration":
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
      values[field] = parseCount(one);
      break;
  }
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

function dedupe(items: string[]): string[] {
  return [...new Set(items)];
}

// ---------------------------------------------------------------------------------------
// The file

async function fileLayer(path: string, shownPath: string): Promise<Layer> {
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
      values[field] = parseCount(value as number);
      return;
    case "anonymousAuth":
    case "kubernetesGroupNames":
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

/** One zod issue as `path: what is wrong`; only the first unknown key is named. */
function issueMessage(issue: SchemaIssue, data: unknown): string {
  if (issue.code === "invalid_union") {
    // runtimeConfig: a string or a mapping to booleans.
    const input = valueAt(data, issue.path);
    const path = fieldPath(issue.path);
    if (input !== null && typeof input === "object" && !Array.isArray(input)) {
      for (const [k, v] of Object.entries(input)) {
        if (typeof v !== "boolean") {
          return `${fieldPath([...issue.path, k])}: expected boolean, got ${describeValue(v)}`;
        }
      }
    }
    return `${path === "" ? "" : `${path}: `}expected a string or a mapping of keys to ` +
      `booleans, got ${describeValue(input)}`;
  }
  return formatIssue(issue, data, {
    suggest: (key) => similarField(key, [...FIELDS, "apiVersion", "kind"]),
  })[0];
}

async function checkReadableFile(path: string, where: string, shown: string): Promise<void> {
  try {
    const f = await Deno.open(path, { read: true });
    try {
      if (!(await f.stat()).isFile) {
        throw new ConfigError(`${where}: ${quote(shown)} is not a file`);
      }
    } finally {
      f.close();
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${where}: cannot read ${quote(shown)}: ${osReason(err)}`);
  }
}

/**
 * A readable file with at least one parsable PEM `CERTIFICATE` block (a CA bundle). With
 * `absentOk`, a missing file passes.
 */
async function checkCertificateBundle(
  path: string,
  where: string,
  shown: string,
  absentOk: boolean,
): Promise<void> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (absentOk && err instanceof Deno.errors.NotFound) return;
    throw new ConfigError(`${where}: cannot read ${quote(shown)}: ${osReason(err)}`);
  }
  const blocks = decodePem(text).filter((b) => b.type === "CERTIFICATE");
  if (blocks.length === 0) {
    throw new ConfigError(`${where}: ${quote(shown)} has no valid PEM CERTIFICATE block`);
  }
  for (const [i, block] of blocks.entries()) {
    try {
      new x509.X509Certificate(block.der);
    } catch {
      throw new ConfigError(`${where}: certificate ${i + 1} in ${quote(shown)} does not parse`);
    }
  }
}

async function checkDirectoryOrAbsent(path: string, where: string, shown: string) {
  try {
    if (!(await Deno.stat(path)).isDirectory) {
      throw new ConfigError(`${where}: ${quote(shown)} is not a directory`);
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    if (err instanceof Deno.errors.NotFound) return;
    throw new ConfigError(`${where}: cannot use ${quote(shown)}: ${osReason(err)}`);
  }
}

// ---------------------------------------------------------------------------------------
// Controllers

/** The controllers `--controllers` selects among (all on by default); a new one goes here. */
export const CONTROLLERS = [
  "clusterrole-aggregation",
  "csrapproving",
  "csrsigning",
  "root-ca-cert-publisher",
  "serviceaccount",
] as const;

function parseControllerEntry(entry: string): string {
  if (entry === "*") return entry;
  const name = entry.replace(/^-/, "");
  if ((CONTROLLERS as readonly string[]).includes(name)) return entry;
  // A misspelt name would otherwise select nothing, silently.
  throw new Error(
    `${quote(entry)} is not a controller selector ("*", "name" or "-name"); the ` +
      `controllers are ${CONTROLLERS.join(", ")}`,
  );
}

/** Options of {@link isControllerEnabled}. */
export interface ControllerOptions {
  /** Controllers that `*` does not start; they run only when named. @default [] */
  disabledByDefault?: readonly string[];
}

/**
 * Whether a controller runs under a `--controllers` selection, as in Kubernetes: the first
 * entry naming it (`name` or `-name`) decides; otherwise `*` starts it unless it is disabled
 * by default; without `*` it does not run.
 *
 * @example
 * ```ts
 * isControllerEnabled(["*", "-csrsigning"], "csrsigning"); // false
 * isControllerEnabled(["*"], "csrapproving"); // true
 * ```
 */
export function isControllerEnabled(
  controllers: readonly string[],
  name: string,
  opts: ControllerOptions = {},
): boolean {
  let star = false;
  for (const entry of controllers) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
    if (entry === "*") star = true;
  }
  return star && !(opts.disabledByDefault ?? []).includes(name);
}

// ---------------------------------------------------------------------------------------
// Listening

/** `127.0.0.1:6443`, `[::1]:6443`. */
export function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The one-line message for a failed listen (from `Deno.listen` or `Deno.serve`), naming the
 * flag to change, e.g. `--secure-port: 127.0.0.1:6443 is already in use`.
 */
export function describeListenError(err: unknown, host: string, port: number): string {
  const at = hostPort(host, port);
  if (err instanceof Deno.errors.AddrInUse) return `--secure-port: ${at} is already in use`;
  if (err instanceof Deno.errors.PermissionDenied) {
    return `--secure-port: permission denied to listen on ${at}`;
  }
  if (err instanceof Deno.errors.AddrNotAvailable) {
    return `--bind-address: ${quote(host)} is not an address of this machine`;
  }
  const reason = osReason(err);
  // A host name that does not resolve (getaddrinfo's words, as Deno passes them on).
  const lookup = /failed to lookup address information: (.*)/.exec(reason);
  if (lookup) return `--bind-address: cannot resolve ${quote(host)}: ${lookup[1]}`;
  return `--bind-address: cannot listen on ${at}: ${reason}`;
}

/**
 * Check that `host:port` can be listened on, by listening and closing at once. Port 0 always
 * passes. Another process may still take the port before the server binds it, so startup
 * must also pass its own listen error through {@link describeListenError}.
 *
 * @throws {ConfigError} with the message of {@link describeListenError}.
 */
export function checkPortFree(host: string, port: number): void {
  try {
    const listener = Deno.listen({ hostname: host, port, transport: "tcp" });
    listener.close();
  } catch (err) {
    throw new ConfigError(describeListenError(err, host, port), { cause: err });
  }
}
