/**
 * Command-line flags of `platform serve`: the flag table (names follow kube-apiserver wherever
 * it has one), the argv tokenizer, the value parsers shared by flags and the configuration
 * file, and {@link ConfigError}, the one error type of the configuration layer.
 *
 * Nothing here reads files or knows the configuration file's schema; `server_config.ts`
 * joins flags, file and defaults into one `ServerConfig`.
 *
 * @module
 */

/**
 * Bad configuration. `message` is the one line to print before exiting with status 2; it
 * names the flag (`--secure-port: …`) or the file and field path
 * (`config.yaml: featureGates.WatchList: …`).
 *
 * Configuration errors are not API errors: they never reach HTTP.
 */
export class ConfigError extends Error {
  override name = "ConfigError";

  /**
   * Prefix the message of a value error with where the value came from.
   *
   * @example
   * ```ts
   * ConfigError.at("--secure-port", new Error('"abc" is not a port number (0-65535)'));
   * ```
   */
  static at(where: string, cause: unknown): ConfigError {
    const message = cause instanceof Error ? cause.message : String(cause);
    return new ConfigError(`${where}: ${message}`, { cause });
  }
}

/** The value a flag takes, which decides how it is parsed and shown in `--help`. */
export type FlagKind =
  | "string"
  | "path"
  | "host"
  | "port"
  | "list"
  | "map"
  | "duration"
  | "bytes"
  | "int"
  | "enum"
  | "bool";

/** One flag of `platform serve`. */
export interface FlagSpec {
  /** Name without the leading dashes, e.g. `secure-port`. */
  name: string;
  /** The configuration-file field set by this flag; absent for `--config`. */
  field?: string;
  kind: FlagKind;
  /** The default as shown in `--help`; `undefined` means "none". */
  defaultText?: string;
  /** For `enum` flags: the accepted values. */
  values?: readonly string[];
  /** Repeatable: every occurrence adds to the value (lists and maps). */
  repeatable?: boolean;
  help: string;
}

/** Every flag of `platform serve`, in the order `--help` lists them. */
export const FLAGS: readonly FlagSpec[] = [
  {
    name: "config",
    kind: "path",
    help: "Path of a ServerConfiguration YAML file. Flags override the file; the file " +
      "overrides defaults. Relative paths in the file resolve against its directory.",
  },
  {
    name: "data-dir",
    field: "dataDir",
    kind: "path",
    defaultText: "./data",
    help: "Directory holding the stored objects, the journal and the generated PKI.",
  },
  {
    name: "bind-address",
    field: "bindAddress",
    kind: "host",
    defaultText: "127.0.0.1",
    help: "IP address or host name to listen on for HTTPS (0.0.0.0 or :: for all interfaces).",
  },
  {
    name: "secure-port",
    field: "securePort",
    kind: "port",
    defaultText: "6443",
    help: "Port to serve HTTPS on; 0 picks a free port.",
  },
  {
    name: "tls-cert-file",
    field: "tlsCertFile",
    kind: "path",
    help: "PEM serving certificate (leaf first, then intermediates). Without it a " +
      "certificate signed by the generated cluster CA is used.",
  },
  {
    name: "tls-private-key-file",
    field: "tlsPrivateKeyFile",
    kind: "path",
    help: "PEM private key matching --tls-cert-file.",
  },
  {
    name: "tls-san",
    field: "tlsSANs",
    kind: "list",
    repeatable: true,
    help: "Extra subject alternative names (IP addresses or DNS names) for the generated " +
      "serving certificate. Repeatable and/or comma-separated.",
  },
  {
    name: "token-auth-file",
    field: "tokenAuthFile",
    kind: "path",
    help: 'Static bearer tokens, one per line as CSV: token,user,uid,"group1,group2".',
  },
  {
    name: "client-ca-file",
    field: "clientCAFile",
    kind: "path",
    help: "PEM CA bundle that verifies client certificates. Given, the server asks every " +
      "client for a certificate and one that verifies authenticates as user = subject CN, " +
      "groups = subject O. The cluster CA is <data-dir>/pki/ca.crt. Without it client " +
      "certificates are not asked for.",
  },
  {
    name: "authentication-config",
    field: "authenticationConfig",
    kind: "path",
    help: "AuthenticationConfiguration file (apiserver.platform.io/v1beta1): JWT issuers with " +
      "their claim mappings, and anonymous access. Validated at start; re-read when it " +
      "changes (an invalid new version is logged and the old one stays in force).",
  },
  {
    name: "kubernetes-group-names",
    field: "kubernetesGroupNames",
    kind: "bool",
    defaultText: "true",
    help: "Discovery and OpenAPI also list each built-in group under its Kubernetes name " +
      "(rbac.authorization.k8s.io beside rbac.authorization.platform.io), so manifests and " +
      "clients written for Kubernetes work unchanged. Requests work under either name.",
  },
  {
    name: "anonymous-auth",
    field: "anonymousAuth",
    kind: "bool",
    defaultText: "false",
    help: "Serve requests without credentials as user system:anonymous (group " +
      "system:unauthenticated), for the authorizers to judge. Not together with an " +
      "authentication configuration that has an anonymous section.",
  },
  {
    name: "authorization-config",
    field: "authorizationConfig",
    kind: "path",
    defaultText: "RBAC, with system:masters as superusers",
    help: "AuthorizationConfiguration file (apiserver.platform.io/v1beta1): the ordered " +
      "authorizers (RBAC, Webhook, AlwaysAllow, AlwaysDeny).",
  },
  {
    name: "cluster-signing-cert-file",
    field: "clusterSigningCertFile",
    kind: "path",
    defaultText: "<data-dir>/pki/ca.crt",
    help: "PEM CA certificate (then its intermediates) with which the built-in CSR signer " +
      "issues certificates for every well-known signer. With --cluster-signing-key-file.",
  },
  {
    name: "cluster-signing-key-file",
    field: "clusterSigningKeyFile",
    kind: "path",
    defaultText: "<data-dir>/pki/ca.key",
    help: "PEM private key of --cluster-signing-cert-file.",
  },
  ...perSignerFlags("apiserver-client", "ApiserverClient"),
  ...perSignerFlags("apiserver-client-nodeagent", "ApiserverClientNodeagent"),
  ...perSignerFlags("nodeagent-serving", "NodeagentServing"),
  {
    name: "cluster-signing-duration",
    field: "clusterSigningDuration",
    kind: "duration",
    defaultText: "8760h",
    help: "Longest lifetime of a certificate the built-in signer issues; a request's " +
      "spec.expirationSeconds may ask for less.",
  },
  {
    name: "runtime-config",
    field: "runtimeConfig",
    kind: "map",
    repeatable: true,
    help: "Enable or disable built-in API versions and resources: key[=true|false],… with " +
      "keys api/all, api/ga, api/beta, api/alpha, v1 (core), group/version, " +
      "group/version/resource (a built-in group in either spelling, coordination.k8s.io = " +
      "coordination.platform.io). What is off leaves discovery, OpenAPI and routing; " +
      "v1/namespaces, and RBAC's resources while RBAC authorizes, cannot be turned off.",
  },
  {
    name: "feature-gates",
    field: "featureGates",
    kind: "map",
    repeatable: true,
    help: "Feature gates: Name=true|false,… (see the list below).",
  },
  {
    name: "storage",
    field: "storage",
    kind: "enum",
    values: ["file", "memory"],
    defaultText: "file",
    help: "Storage backend: file (durable, under --data-dir) or memory (lost on exit).",
  },
  {
    name: "encryption-provider-config",
    field: "encryptionProviderConfig",
    kind: "path",
    defaultText: "none: values are stored in clear",
    help: "EncryptionConfiguration file (apiserver.config.platform.io/v1): the resources the " +
      "file store encrypts at rest (aescbc, aesgcm, secretbox, identity) and their keys.",
  },
  {
    name: "history-retention",
    field: "historyRetention",
    kind: "duration",
    defaultText: "5m",
    help: "How long past revisions stay available to watches and consistent lists.",
  },
  {
    name: "controllers",
    field: "controllers",
    kind: "list",
    repeatable: true,
    defaultText: "*",
    help: "Controllers to run: '*' runs every one, 'name' enables one, '-name' disables " +
      "one, e.g. '*,-csrsigning'. Names: clusterrole-aggregation, csrapproving, csrsigning, " +
      "root-ca-cert-publisher, serviceaccount.",
  },
  {
    name: "service-cluster-ip-range",
    field: "serviceClusterIPRange",
    kind: "string",
    defaultText: "10.0.0.0/24",
    help: "CIDR the cluster IPs of Services are allocated from; an IPv4 and an IPv6 CIDR " +
      "separated by a comma for dual-stack (the first is the primary family). Its first " +
      "address is the kubernetes Service's.",
  },
  {
    name: "service-node-port-range",
    field: "serviceNodePortRange",
    kind: "string",
    defaultText: "30000-32767",
    help: "Port range the node ports of NodePort and LoadBalancer Services are allocated from.",
  },
  {
    name: "shutdown-timeout",
    field: "shutdownTimeout",
    kind: "duration",
    defaultText: "30s",
    help: "How long a graceful shutdown waits for in-flight requests.",
  },
  {
    name: "request-timeout",
    field: "requestTimeout",
    kind: "duration",
    defaultText: "60s",
    help: "Default deadline of a non-watch request.",
  },
  {
    name: "min-request-timeout",
    field: "minRequestTimeout",
    kind: "int",
    defaultText: "1800",
    help: "Seconds a watch without timeoutSeconds lasts at least (it ends at a random time " +
      "between this and twice this, as kube's do).",
  },
  {
    name: "max-requests-inflight",
    field: "maxRequestsInflight",
    kind: "int",
    defaultText: "400",
    help: "Non-mutating requests (watches aside) served at once; more get 429. 0: no limit.",
  },
  {
    name: "max-mutating-requests-inflight",
    field: "maxMutatingRequestsInflight",
    kind: "int",
    defaultText: "200",
    help: "Mutating requests served at once; more get 429. 0: no limit.",
  },
  {
    name: "max-connections",
    field: "maxConnections",
    kind: "int",
    defaultText: "the open-file limit less 128",
    help: "Open client connections at most; more are closed at once. 0: the default.",
  },
  {
    name: "max-connections-per-client",
    field: "maxConnectionsPerClient",
    kind: "int",
    defaultText: "half of --max-connections",
    help: "Open connections from one client address at most. 0: the default.",
  },
  {
    name: "max-request-body-bytes",
    field: "maxRequestBodyBytes",
    kind: "bytes",
    defaultText: "3145728",
    help: "Largest accepted request body, in bytes.",
  },
  {
    name: "log-level",
    field: "logLevel",
    kind: "enum",
    values: ["debug", "info", "warn", "error"],
    defaultText: "info",
    help: "Least severe log level written.",
  },
];

/**
 * The `--cluster-signing-<signer>-{cert,key}-file` pair of one well-known signer
 * (`platform.io/<signer>`): fields `clusterSigning<Field>CertFile` / `…KeyFile`.
 */
function perSignerFlags(signer: string, field: string): FlagSpec[] {
  return [
    {
      name: `cluster-signing-${signer}-cert-file`,
      field: `clusterSigning${field}CertFile`,
      kind: "path",
      defaultText: "the cluster CA",
      help: `PEM CA certificate with which the built-in signer issues certificates for ` +
        `platform.io/${signer} requests (with its key file). Not together with ` +
        `--cluster-signing-cert-file and --cluster-signing-key-file.`,
    },
    {
      name: `cluster-signing-${signer}-key-file`,
      field: `clusterSigning${field}KeyFile`,
      kind: "path",
      defaultText: "the cluster CA key",
      help: `PEM private key of --cluster-signing-${signer}-cert-file.`,
    },
  ];
}

const FLAGS_BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((f) => [f.name, f]));

/** Flags as given on the command line, before their values are parsed. */
export interface ParsedArgs {
  /** `--help` or `-h` was given. */
  help: boolean;
  /** Raw values per flag name, in command-line order (one entry per occurrence). */
  values: Map<string, string[]>;
}

/**
 * Split argv into flags. Accepts `--name=value` and `--name value`; repeated flags keep every
 * occurrence (the caller decides whether the last wins or they add up).
 *
 * @throws {ConfigError} on an unknown flag, a missing value or a positional argument.
 * @example
 * ```ts
 * tokenizeArgs(["--secure-port=0", "--tls-san", "a,b"]).values.get("tls-san"); // ["a,b"]
 * ```
 */
export function tokenizeArgs(argv: readonly string[]): ParsedArgs {
  const values = new Map<string, string[]>();
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help" || arg === "-help") {
      help = true;
      continue;
    }
    if (!arg.startsWith("-") || arg === "-" || arg === "--") {
      throw new ConfigError(`unexpected argument ${JSON.stringify(arg)}: serve takes only flags`);
    }
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq === -1 ? body : body.slice(0, eq);
    const spec = FLAGS_BY_NAME.get(name);
    if (!spec) {
      throw new ConfigError(`unknown flag ${JSON.stringify(`--${name}`)} (see --help)`);
    }
    let value: string;
    if (eq !== -1) {
      value = body.slice(eq + 1);
    } else if (spec.kind === "bool") {
      value = "true"; // a bare boolean flag turns it on, as with kube's flags
    } else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("--") && next.length > 2)) {
        throw new ConfigError(`--${name}: missing value`);
      }
      value = next;
      i++;
    }
    const list = values.get(name) ?? [];
    list.push(value);
    values.set(name, list);
  }
  return { help, values };
}

/**
 * The flag list of `--help`: one line per flag with its default, then the known feature gates
 * (passed in so that this module does not depend on the gate table). No usage header: the
 * command line adds its own.
 */
export function formatFlagHelp(gateLines: readonly string[] = []): string {
  const rows = FLAGS.map((f) => ({
    left: `  --${f.name} ${valueName(f)}`,
    // The default stays on one line.
    words: [...f.help.split(" "), `(default: ${f.defaultText ?? "none"})`],
  }));
  rows.push({ left: "  -h, --help", words: "Show this help and exit.".split(" ") });
  // Flags longer than the column put their text on the next line.
  const width = Math.min(Math.max(...rows.map((r) => r.left.length)) + 2, HELP_COLUMN);
  const lines = rows.flatMap((r) => {
    const text = wrap(r.words, HELP_WIDTH - width).map((t) => " ".repeat(width) + t);
    if (r.left.length + 2 > width) return [r.left, ...text];
    text[0] = r.left.padEnd(width) + text[0].slice(width);
    return text;
  });
  if (gateLines.length > 0) lines.push("", "Feature gates (--feature-gates):", ...gateLines);
  return lines.join("\n") + "\n";
}

const HELP_WIDTH = 100;
/** Where help text starts: longer flags get their own line. */
const HELP_COLUMN = 40;

/** Join words into lines of at most `width` characters (a longer word gets its own line). */
function wrap(words: readonly string[], width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of words) {
    if (line !== "" && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  out.push(line);
  return out;
}

function valueName(f: FlagSpec): string {
  switch (f.kind) {
    case "list":
      return "strings";
    case "map":
      return "key=value,...";
    case "port":
      return "int";
    case "bytes":
    case "int":
      return "int";
    case "enum":
      return f.values!.join("|");
    default:
      return f.kind;
  }
}

// ---------------------------------------------------------------------------------------
// Value parsers, shared by flags and the configuration file. Each throws an Error whose
// message says what is wrong with the quoted value; the caller prefixes where it came from.

/**
 * A port number 0-65535 (0 = pick a free port).
 *
 * @example
 * ```ts
 * parsePort("6443"); // 6443
 * ```
 */
export function parsePort(value: string | number): number {
  const n = typeof value === "number" ? value : /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new Error(`${quote(value)} is not a port number (0-65535)`);
  }
  return n;
}

/** A non-negative integer. */
export function parseCount(value: string | number): number {
  const n = typeof value === "number" ? value : /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new Error(`${quote(value)} is not a non-negative integer`);
  }
  return n;
}

/** A positive byte count (plain integer). */
export function parseByteCount(value: string | number): number {
  const n = typeof value === "number" ? value : /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new Error(`${quote(value)} is not a positive number of bytes`);
  }
  return n;
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * A Go-style duration (`300ms`, `30s`, `5m`, `1h30m`, `1.5h`, `0`) in milliseconds.
 *
 * @example
 * ```ts
 * parseDuration("1m30s"); // 90000
 * ```
 */
export function parseDuration(value: string): number {
  const text = value.trim();
  if (text === "0") return 0;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let ms = 0;
  let pos = 0;
  while (pos < text.length) {
    part.lastIndex = pos;
    const m = part.exec(text);
    if (!m) {
      throw new Error(`${quote(value)} is not a duration (like "30s", "5m" or "1h30m")`);
    }
    ms += Number(m[1]) * DURATION_UNITS[m[2]];
    pos = part.lastIndex;
  }
  if (text.length === 0 || !Number.isFinite(ms)) {
    throw new Error(`${quote(value)} is not a duration (like "30s", "5m" or "1h30m")`);
  }
  return Math.round(ms);
}

/** A duration for `--help` and logs: `90000` → `1m30s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  let out = "";
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  if (h) out += `${h}h`;
  if (m) out += `${m}m`;
  if (s) out += `${s}s`;
  return out;
}

/** `true`/`false`, case-insensitive. */
export function parseBool(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === "true") return true;
  if (v === "false") return false;
  throw new Error(`${quote(value)} is not a boolean (true or false)`);
}

/** Split a comma-separated list, trimming items and dropping empty ones. */
export function splitList(value: string): string[] {
  return value.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
}

/** One of the given values. */
export function parseEnum<T extends string>(value: string, values: readonly T[]): T {
  if ((values as readonly string[]).includes(value)) return value as T;
  throw new Error(
    `${quote(value)} is not one of ${values.map((v) => JSON.stringify(v)).join(", ")}`,
  );
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * The canonical text of an IP address (IPv6 compressed and lower-case), or `undefined` when
 * `text` is not an IPv4 or IPv6 address.
 *
 * @example
 * ```ts
 * normalizeIp("0:0::1"); // "::1"
 * normalizeIp("example.com"); // undefined
 * ```
 */
export function normalizeIp(text: string): string | undefined {
  if (IPV4.test(text)) return text;
  if (!text.includes(":") || /[^0-9a-f:.]/i.test(text)) return undefined;
  try {
    return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

/** A DNS name, optionally with a leading `*.` wildcard label when `wildcard` is set. */
export function isDnsName(text: string, opts: { wildcard?: boolean } = {}): boolean {
  const name = opts.wildcard && text.startsWith("*.") ? text.slice(2) : text;
  if (name.length === 0 || name.length > 253) return false;
  return name.replace(/\.$/, "").split(".").every((l) => DNS_LABEL.test(l));
}

/** A listen address: an IP address or a DNS name. Returns it normalized. */
export function parseHost(value: string): string {
  const text = value.trim();
  const ip = normalizeIp(text);
  if (ip !== undefined) return ip;
  if (isDnsName(text)) return text.toLowerCase();
  throw new Error(`${quote(value)} is not an IP address or DNS name`);
}

/** A subject alternative name: an IP address or a DNS name (wildcards allowed). */
export function parseSan(value: string): string {
  const text = value.trim();
  const ip = normalizeIp(text);
  if (ip !== undefined) return ip;
  if (isDnsName(text, { wildcard: true })) return text.toLowerCase();
  throw new Error(`${quote(value)} is not an IP address or DNS name`);
}

/** JSON-quote strings, print other values as they are: used in every value error. */
export function quote(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** The OS reason of a file-system error without Deno's `(os error N): op 'path'` tail. */
export function osReason(err: unknown): string {
  if (err instanceof Deno.errors.NotFound) return "No such file or directory";
  if (err instanceof Deno.errors.PermissionDenied) return "Permission denied";
  if (err instanceof Deno.errors.IsADirectory) return "Is a directory";
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/ \(os error \d+\).*$/s, "");
}
