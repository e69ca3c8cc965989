/**
 * The credentials the server presents to admission webhooks, from the kubeconfig a
 * `WebhookAdmissionConfiguration` names (`kubeConfigFile`), matched as kube matches them. The
 * webhook's target is its URL's `host:port` (port 443 when the URL has none; a Service reference
 * is `<name>.<namespace>.svc:<port>`), and the `users` entry used is the first of:
 *
 * 1. the one named exactly `host:port`;
 * 2. `*.` and the target less its first labels, longest first (`*.ns.svc:443`, `*.svc:443`);
 * 3. for port 443 only: `host`, then `*.` and the host less its first labels (`*.example.com`);
 * 4. `*`;
 * 5. the user of the kubeconfig's `current-context`;
 *
 * and none (no credentials) otherwise. Per user: `token` or `tokenFile` (a bearer token), and
 * `client-certificate`/`client-certificate-data` with `client-key`/`client-key-data` (PEM;
 * `-data` base64). Files are read once, at load; relative paths resolve against the
 * kubeconfig's directory. Other credential kinds (`username`/`password`, `exec`,
 * `auth-provider`, impersonation) are refused rather than ignored.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import { decodePem } from "../api/mod.ts";
import { namedEntries, type NamedEntry } from "../kubeconfig/mod.ts";
import { osReason, parseYamlConfig, quote } from "../config/mod.ts";
import type { WebhookCredentials } from "./webhook/client.ts";

/** The users of a webhook kubeconfig, by name, and the current context's. */
export interface WebhookKubeconfig {
  users: Map<string, WebhookCredentials>;
  /** The credentials of the `current-context`'s user, when it names one. */
  current?: WebhookCredentials;
}

const UNSUPPORTED_USER_FIELDS = [
  "username",
  "password",
  "exec",
  "auth-provider",
  "as",
  "as-uid",
  "as-groups",
  "as-user-extra",
];

type Obj = Record<string, unknown>;

/**
 * Reads a kubeconfig's users for webhooks.
 *
 * @throws {Error} naming the kubeconfig field at fault, e.g.
 * `users[0].user.client-key: required with client-certificate`.
 */
export async function readWebhookKubeconfig(path: string): Promise<WebhookKubeconfig> {
  const base = dirname(path);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new Error(`cannot read the file: ${osReason(err)}`);
  }
  const config = parseYamlConfig(text, "the file");
  if (!isObj(config)) throw new Error("expected a kubeconfig mapping");
  const users = new Map<string, WebhookCredentials>();
  for (const entry of entries(config, "users", "user")) {
    const at = entry.path.slice(0, -".user".length);
    if (entry.name === "") throw new Error(`${at}.name: required`);
    if (users.has(entry.name)) throw new Error(`${at}.name: ${quote(entry.name)} is given twice`);
    users.set(entry.name, await credentialsOf(entry.value, entry.path, base));
  }
  let current: WebhookCredentials | undefined;
  const currentContext = config["current-context"];
  if (typeof currentContext === "string" && currentContext !== "") {
    const context = entries(config, "contexts", "context").find((c) => c.name === currentContext);
    if (!context) {
      throw new Error(
        `current-context: ${quote(currentContext)} is not the name of an entry of contexts`,
      );
    }
    const userName = context.value.user;
    if (typeof userName === "string" && userName !== "") {
      current = users.get(userName);
      if (!current) {
        throw new Error(
          `contexts: the user ${quote(userName)} of ${quote(currentContext)} is not the name ` +
            "of an entry of users",
        );
      }
    }
  }
  return { users, current };
}

/** The credentials for a webhook at `hostPort` (`host:port`), by kube's matching rules. */
export function credentialsFor(
  kubeconfig: WebhookKubeconfig,
  hostPort: string,
): WebhookCredentials | undefined {
  const { users } = kubeconfig;
  const exactOrStar = (target: string) => {
    const exact = users.get(target);
    if (exact) return exact;
    const labels = target.split(".");
    for (let i = 1; i < labels.length; i++) {
      const star = users.get(`*.${labels.slice(i).join(".")}`);
      if (star) return star;
    }
    return undefined;
  };
  const found = exactOrStar(hostPort);
  if (found) return found;
  const colon = hostPort.lastIndexOf(":");
  if (colon > 0 && hostPort.slice(colon + 1) === "443") {
    const host = hostPort.slice(0, colon);
    const withoutPort = exactOrStar(host);
    if (withoutPort) return withoutPort;
  }
  return users.get("*") ?? kubeconfig.current;
}

/** `host:port` of a webhook URL; port 443 when the URL names none. */
export function webhookHostPort(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "443"}`;
}

async function credentialsOf(user: Obj, at: string, base: string): Promise<WebhookCredentials> {
  for (const field of UNSUPPORTED_USER_FIELDS) {
    if (user[field] !== undefined) throw new Error(`${at}.${field}: is not supported`);
  }
  const out: WebhookCredentials = {};
  const token = await fileOrValue(user, "token", "tokenFile", at, base, false);
  if (token !== undefined) {
    const trimmed = token.trim();
    if (trimmed === "") throw new Error(`${at}: the token is empty`);
    out.token = trimmed;
  }
  const cert = await fileOrValue(user, "client-certificate-data", "client-certificate", at, base);
  const key = await fileOrValue(user, "client-key-data", "client-key", at, base);
  if (cert !== undefined && key === undefined) {
    throw new Error(`${at}.client-key: required with client-certificate`);
  }
  if (key !== undefined && cert === undefined) {
    throw new Error(`${at}.client-certificate: required with client-key`);
  }
  if (cert !== undefined && key !== undefined) {
    if (!decodePem(cert).some((b) => b.type === "CERTIFICATE")) {
      throw new Error(`${at}.client-certificate: no PEM CERTIFICATE block`);
    }
    if (!decodePem(key).some((b) => b.type.endsWith("PRIVATE KEY"))) {
      throw new Error(`${at}.client-key: no PEM PRIVATE KEY block`);
    }
    out.cert = cert;
    out.key = key;
  }
  return out;
}

/**
 * A value given inline (`inline`, base64 when `base64`) or in a file (`file`), not both; the
 * token is given as text inline.
 */
async function fileOrValue(
  user: Obj,
  inline: string,
  file: string,
  at: string,
  base: string,
  base64 = true,
): Promise<string | undefined> {
  const value = user[inline];
  const path = user[file];
  if (value !== undefined && path !== undefined) {
    throw new Error(`${at}: give ${inline} or ${file}, not both`);
  }
  if (value !== undefined) {
    if (typeof value !== "string") throw new Error(`${at}.${inline}: expected a string`);
    if (!base64) return value;
    try {
      return new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0)));
    } catch {
      throw new Error(`${at}.${inline}: not valid base64`);
    }
  }
  if (path !== undefined) {
    if (typeof path !== "string" || path === "") {
      throw new Error(`${at}.${file}: expected a file path`);
    }
    const full = isAbsolute(path) ? path : resolve(base, path);
    try {
      return await Deno.readTextFile(full);
    } catch (err) {
      throw new Error(`${at}.${file}: cannot read ${quote(path)}: ${osReason(err)}`);
    }
  }
  return undefined;
}

/** The kubeconfig's named list, its shape errors as plain Errors like the others here. */
function entries(config: Obj, list: string, inner: string): NamedEntry[] {
  try {
    return namedEntries(config, list, inner);
  } catch (err) {
    throw new Error((err as Error).message);
  }
}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
