/**
 * From merged configuration files and command-line overrides to the settings of one
 * connection, as kubectl resolves them: the context is `--context` or `current-context`; the
 * cluster and user are `--cluster`/`--user` or the context's; the namespace is `-n`, the
 * context's, or `default`. Command-line values override the file's: `--server`,
 * `--certificate-authority`, `--insecure-skip-tls-verify` (which drops the file's CA),
 * `--tls-server-name`, `--client-certificate`/`--client-key`, `--token` or
 * `--username`/`--password` (which replace the user's token, basic credentials and exec
 * plugin), `--as`/`--as-group`/`--as-uid` (which replace the user's impersonation).
 *
 * Files named in an entry (`certificate-authority`, `client-certificate`, `client-key`,
 * `tokenFile`, and an `exec.command` with a `/`) resolve against the directory of the file
 * the entry came from; the files are read here.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import type { Kubeconfig } from "./load.ts";
import {
  boolField,
  isObj,
  KubeconfigError,
  type NamedEntry,
  type Obj,
  osReason,
  quote,
  stringField,
} from "./parse.ts";
import { type ExecConfig, parseExecConfig } from "./exec_config.ts";

/** Command-line values that override the configuration files. */
export interface ConnectionOverrides {
  context?: string;
  cluster?: string;
  user?: string;
  namespace?: string;
  server?: string;
  certificateAuthority?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  clientCertificate?: string;
  clientKey?: string;
  token?: string;
  username?: string;
  password?: string;
  impersonate?: string;
  impersonateGroups?: string[];
  impersonateUid?: string;
  disableCompression?: boolean;
}

/** Who to impersonate (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-*`). */
export interface Impersonation {
  user?: string;
  groups: string[];
  uid?: string;
  extra: Record<string, string[]>;
}

/** Everything one connection needs, files read. */
export interface ClientSettings {
  /** The server URL (`https://host:port`, maybe with a path prefix). */
  server: string;
  namespace: string;
  /** The names the settings came from, when they came from a file. */
  contextName?: string;
  clusterName?: string;
  userName?: string;
  tlsServerName?: string;
  insecureSkipTlsVerify: boolean;
  /** PEM certificates trusted for the server, besides the system roots. */
  caPem?: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
  /** A file holding the bearer token, re-read when a request is refused with 401. */
  tokenFile?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
  impersonate?: Impersonation;
  disableCompression: boolean;
  proxyUrl?: string;
  /** The cluster's `extensions` entry `client.authentication.k8s.io/exec`, for exec plugins. */
  execClusterConfig?: unknown;
}

/**
 * Resolves the settings of the connection `overrides` select in `config`.
 *
 * @throws {KubeconfigError} with kubectl's wording where it has one:
 * `context was not found for specified context: x`, `cluster "x" not found`,
 * `user "x" not found`, or a field that cannot be read.
 */
export async function resolveClientSettings(
  config: Kubeconfig,
  overrides: ConnectionOverrides = {},
): Promise<ClientSettings> {
  const contextName = overrides.context || config.currentContext;
  let context: NamedEntry | undefined;
  if (contextName) {
    context = config.contexts.get(contextName);
    if (!context && overrides.context) {
      fail(`context was not found for specified context: ${overrides.context}`);
    }
  }
  const ctx = context?.value ?? {};
  const at = (field: string) => `${context?.path ?? "context"}.${field}`;
  const clusterName = overrides.cluster || stringField(ctx, "cluster", at("cluster"));
  const userName = overrides.user || stringField(ctx, "user", at("user"));
  const cluster = clusterName ? config.clusters.get(clusterName) : undefined;
  if (clusterName && !cluster && (overrides.cluster || !overrides.server)) {
    fail(`cluster ${quote(clusterName)} not found`);
  }
  const user = userName ? config.users.get(userName) : undefined;
  if (userName && !user && overrides.user) fail(`user ${quote(userName)} not found`);

  const c = cluster?.value ?? {};
  const u = user?.value ?? {};
  const cAt = (f: string) => `${cluster?.path}.${f}`;
  const uAt = (f: string) => `${user?.path}.${f}`;

  const server = overrides.server || stringField(c, "server", cAt("server"));
  if (!server) {
    fail(
      "no server found: give --server, or a configuration file (--platformconfig, " +
        "$PLATFORMCONFIG or $HOME/.platform/config) whose context names a cluster",
    );
  }
  const insecure = overrides.insecureSkipTlsVerify ??
    boolField(c, "insecure-skip-tls-verify", cAt("insecure-skip-tls-verify")) ?? false;
  const settings: ClientSettings = {
    server: normalizeServer(server),
    namespace: overrides.namespace ||
      stringField(ctx, "namespace", at("namespace")) || "default",
    contextName: context?.name,
    clusterName: cluster?.name,
    userName: user?.name,
    tlsServerName: overrides.tlsServerName ||
      stringField(c, "tls-server-name", cAt("tls-server-name")),
    insecureSkipTlsVerify: insecure,
    disableCompression: overrides.disableCompression ??
      boolField(c, "disable-compression", cAt("disable-compression")) ?? false,
    proxyUrl: stringField(c, "proxy-url", cAt("proxy-url")),
  };
  // --insecure-skip-tls-verify on the command line drops the file's CA, as kubectl does.
  if (overrides.certificateAuthority) {
    settings.caPem = await readFlagFile(overrides.certificateAuthority, "certificate-authority");
  } else if (!overrides.insecureSkipTlsVerify && cluster) {
    settings.caPem = await fileOrData(cluster, "certificate-authority");
  }
  if (settings.insecureSkipTlsVerify && settings.caPem) {
    fail(
      "specifying a root certificates file with the insecure flag is not allowed",
    );
  }
  const execExt = clusterExecExtension(c);
  if (execExt !== undefined) settings.execClusterConfig = execExt;

  settings.clientCertPem = overrides.clientCertificate
    ? await readFlagFile(overrides.clientCertificate, "client-certificate")
    : user && await fileOrData(user, "client-certificate");
  settings.clientKeyPem = overrides.clientKey
    ? await readFlagFile(overrides.clientKey, "client-key")
    : user && await fileOrData(user, "client-key");

  if (overrides.token || overrides.username || overrides.password) {
    settings.token = overrides.token || undefined;
    settings.username = overrides.username || undefined;
    settings.password = overrides.password || undefined;
  } else if (user) {
    settings.token = stringField(u, "token", uAt("token")) || undefined;
    const tokenFile = stringField(u, "tokenFile", uAt("tokenFile"));
    if (tokenFile && !settings.token) {
      settings.tokenFile = resolveAgainst(user, tokenFile);
      settings.token = await readEntryFile(settings.tokenFile, uAt("tokenFile")).then((t) =>
        t.trim()
      );
    }
    settings.username = stringField(u, "username", uAt("username"));
    settings.password = stringField(u, "password", uAt("password"));
    if (u.exec !== undefined && u.exec !== null) {
      settings.exec = parseExecConfig(u.exec, uAt("exec"));
      if (settings.exec.command.includes("/") && !isAbsolute(settings.exec.command)) {
        settings.exec.command = resolveAgainst(user, settings.exec.command);
      }
    }
    if (u["auth-provider"] !== undefined) {
      fail(`${uAt("auth-provider")}: auth providers are not supported; use an exec plugin`);
    }
  }
  settings.impersonate = impersonation(overrides, u, uAt);
  return settings;
}

function impersonation(
  overrides: ConnectionOverrides,
  u: Obj,
  uAt: (f: string) => string,
): Impersonation | undefined {
  const flagGiven = overrides.impersonate || overrides.impersonateUid ||
    (overrides.impersonateGroups?.length ?? 0) > 0;
  if (flagGiven) {
    return {
      user: overrides.impersonate || undefined,
      groups: overrides.impersonateGroups ?? [],
      uid: overrides.impersonateUid || undefined,
      extra: {},
    };
  }
  const user = stringField(u, "as", uAt("as"));
  const uid = stringField(u, "as-uid", uAt("as-uid"));
  const groups = u["as-groups"] ?? [];
  if (!Array.isArray(groups) || groups.some((g) => typeof g !== "string")) {
    fail(`${uAt("as-groups")}: expected a list of strings`);
  }
  const extraRaw = u["as-user-extra"] ?? {};
  if (!isObj(extraRaw)) fail(`${uAt("as-user-extra")}: expected a mapping`);
  const extra: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(extraRaw)) {
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
      fail(`${uAt("as-user-extra")}.${k}: expected a list of strings`);
    }
    extra[k] = v as string[];
  }
  if (!user && !uid && groups.length === 0 && Object.keys(extra).length === 0) return undefined;
  return { user, groups: groups as string[], uid, extra };
}

/** `host:port` without a scheme means https, as kubectl reads it. */
function normalizeServer(server: string): string {
  const withScheme = server.includes("://") ? server : `https://${server}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    fail(`the server ${quote(server)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    fail(`the server ${quote(server)} must be an https or http URL`);
  }
  return withScheme.replace(/\/+$/, "");
}

/** The cluster's `extensions` entry for exec plugins (kube's name for it). */
function clusterExecExtension(cluster: Obj): unknown {
  const list = cluster.extensions;
  if (!Array.isArray(list)) return undefined;
  const entry = list.find((e) => isObj(e) && e.name === "client.authentication.k8s.io/exec") as
    | Obj
    | undefined;
  return entry?.extension;
}

/** `<field>` (a path) or `<field>-data` (base64) of an entry; the data wins, as in kubectl. */
async function fileOrData(entry: NamedEntry, field: string): Promise<string | undefined> {
  const data = stringField(entry.value, `${field}-data`, `${entry.path}.${field}-data`);
  if (data) {
    try {
      return new TextDecoder().decode(Uint8Array.from(atob(data), (ch) => ch.charCodeAt(0)));
    } catch {
      fail(`${entry.path}.${field}-data: is not valid base64`);
    }
  }
  const file = stringField(entry.value, field, `${entry.path}.${field}`);
  if (!file) return undefined;
  return await readEntryFile(resolveAgainst(entry, file), `${entry.path}.${field}`);
}

function resolveAgainst(entry: NamedEntry, path: string): string {
  return isAbsolute(path) ? path : resolve(dirname(entry.file || "."), path);
}

async function readEntryFile(path: string, at: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    fail(`${at}: cannot read ${quote(path)}: ${osReason(err)}`);
  }
}

async function readFlagFile(path: string, flag: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    fail(`--${flag}: cannot read ${quote(path)}: ${osReason(err)}`);
  }
}

function fail(message: string): never {
  throw new KubeconfigError(message);
}
