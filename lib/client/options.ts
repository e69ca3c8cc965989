/**
 * The global connection options every client command takes (spec 03, "Global connection
 * options"), as data, and their reading into connection overrides. Options that concern
 * kubectl's other programs (profiling, storage drivers, tolerations) are accepted and do
 * nothing here; `--help` says so.
 *
 * @module
 */

import type { ConnectionOverrides } from "../kubeconfig/mod.ts";
import { CommandError } from "./errors.ts";
import type { FlagSpec, ParsedFlags } from "./flags.ts";

/** The global options, in `--help` order. */
export const GLOBAL_FLAGS: FlagSpec[] = [
  { name: "server", short: "s", kind: "string", help: "The address and port of the API server." },
  {
    name: "namespace",
    short: "n",
    kind: "string",
    help: "If present, the namespace scope for this CLI request.",
  },
  {
    name: "token",
    kind: "string",
    help: "Bearer token for authentication to the API server.",
  },
  {
    name: "username",
    kind: "string",
    help: "Username for basic authentication to the API server.",
  },
  {
    name: "password",
    kind: "string",
    help: "Password for basic authentication to the API server.",
  },
  { name: "user", kind: "string", help: "The name of the configuration user to use." },
  { name: "cluster", kind: "string", help: "The name of the configuration cluster to use." },
  { name: "context", kind: "string", help: "The name of the configuration context to use." },
  {
    name: "platformconfig",
    kind: "string",
    help: "Path to the client configuration file (kubeconfig v1 format). Default: the files of " +
      "$PLATFORMCONFIG (colon-separated, merged), else $HOME/.platform/config.",
  },
  { name: "as", kind: "string", help: "Username to impersonate for the operation." },
  {
    name: "as-group",
    kind: "array",
    default: "[]",
    help: "Group to impersonate for the operation; repeat for several groups.",
  },
  { name: "as-uid", kind: "string", help: "UID to impersonate for the operation." },
  {
    name: "certificate-authority",
    kind: "string",
    help: "Path to a cert file for the certificate authority.",
  },
  {
    name: "client-certificate",
    kind: "string",
    help: "Path to a client certificate file for TLS.",
  },
  { name: "client-key", kind: "string", help: "Path to a client key file for TLS." },
  {
    name: "insecure-skip-tls-verify",
    kind: "bool",
    help: "If true, the server's certificate will not be checked for validity. This will make " +
      "your HTTPS connections insecure.",
  },
  {
    name: "tls-server-name",
    kind: "string",
    help: "Server name to use for server certificate validation. If it is not provided, the " +
      "hostname used to contact the server is used.",
  },
  {
    name: "disable-compression",
    kind: "bool",
    help: "If true, opt-out of response compression for all requests to the server.",
  },
  {
    name: "match-server-version",
    kind: "bool",
    help: "Require server version to match client version (major and minor).",
  },
  {
    name: "request-timeout",
    kind: "string",
    default: "0",
    help: "The length of time to wait before giving up on a single server request. Non-zero " +
      "values must contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero means " +
      "don't timeout requests.",
  },
  {
    name: "warnings-as-errors",
    kind: "bool",
    help: "Treat warnings received from the server as errors and exit with a non-zero exit code.",
  },
  {
    name: "cache-dir",
    kind: "string",
    default: "$HOME/.platform/cache",
    help: "Default cache directory.",
    noop: true,
  },
  {
    name: "default-not-ready-toleration-seconds",
    kind: "int",
    default: "300",
    help: "Indicates the tolerationSeconds of the toleration for notReady:NoExecute.",
    noop: true,
  },
  {
    name: "default-unreachable-toleration-seconds",
    kind: "int",
    default: "300",
    help: "Indicates the tolerationSeconds of the toleration for unreachable:NoExecute.",
    noop: true,
  },
  {
    name: "profile",
    kind: "string",
    default: "none",
    help: "Name of profile to capture. One of (none|cpu|heap|goroutine|threadcreate|block|mutex).",
    noop: true,
  },
  {
    name: "profile-output",
    kind: "string",
    default: "profile.pprof",
    help: "Name of the file to write the profile to.",
    noop: true,
  },
  {
    name: "storage-driver-buffer-duration",
    kind: "string",
    default: "1m0s",
    help: "Writes in the storage driver will be buffered for this duration.",
    noop: true,
  },
  {
    name: "storage-driver-db",
    kind: "string",
    default: "cadvisor",
    help: "database name",
    noop: true,
  },
  {
    name: "storage-driver-host",
    kind: "string",
    default: "localhost:8086",
    help: "database host:port",
    noop: true,
  },
  {
    name: "storage-driver-password",
    kind: "string",
    default: "root",
    help: "database password",
    noop: true,
  },
  {
    name: "storage-driver-secure",
    kind: "bool",
    help: "use secure connection with database",
    noop: true,
  },
  {
    name: "storage-driver-table",
    kind: "string",
    default: "stats",
    help: "table name",
    noop: true,
  },
  {
    name: "storage-driver-user",
    kind: "string",
    default: "root",
    help: "database username",
    noop: true,
  },
  { name: "version", kind: "bool", help: "Print the client version and exit." },
  { name: "help", short: "h", kind: "bool", help: "help for the command" },
];

/** The connection overrides the global options give, with the config file to read. */
export function connectionOverrides(
  flags: ParsedFlags,
): ConnectionOverrides & { configFile?: string } {
  const v = flags.values;
  const str = (name: string) => v.get(name) as string | undefined;
  const bool = (name: string) => v.get(name) as boolean | undefined;
  return {
    configFile: str("platformconfig"),
    context: str("context"),
    cluster: str("cluster"),
    user: str("user"),
    namespace: str("namespace"),
    server: str("server"),
    certificateAuthority: str("certificate-authority"),
    insecureSkipTlsVerify: bool("insecure-skip-tls-verify"),
    tlsServerName: str("tls-server-name"),
    clientCertificate: str("client-certificate"),
    clientKey: str("client-key"),
    token: str("token"),
    username: str("username"),
    password: str("password"),
    impersonate: str("as"),
    impersonateGroups: v.get("as-group") as string[] | undefined,
    impersonateUid: str("as-uid"),
    disableCompression: bool("disable-compression"),
  };
}

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1e3,
  m: 6e4,
  h: 36e5,
};

/**
 * `--request-timeout` in milliseconds: `0` (none) or a duration such as `1m30s`. Non-zero
 * values carry a unit (spec 03), where kubectl also reads a bare integer as seconds.
 *
 * @throws {CommandError} kubectl's `Invalid timeout value. ...`.
 */
export function parseRequestTimeout(value: string | undefined): number {
  if (value === undefined || value === "" || value === "0") return 0;
  if (/^\d+$/.test(value)) {
    throw new CommandError(
      `Invalid timeout value "${value}": a non-zero timeout needs a time unit (e.g. 1s | 2m | 3h)`,
    );
  }
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let ms = 0;
  let at = 0;
  while (at < value.length) {
    re.lastIndex = at;
    const m = re.exec(value);
    if (!m) {
      throw new CommandError(
        "Invalid timeout value. Timeout must be a single integer in seconds, or an integer " +
          "followed by a corresponding time unit (e.g. 1s | 2m | 3h)",
      );
    }
    ms += Number(m[1]) * UNITS[m[2]];
    at = re.lastIndex;
  }
  return Math.ceil(ms);
}
