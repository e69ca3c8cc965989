/**
 * How the server reaches a webhook: the URL to POST to and the TLS settings and credentials to
 * use, read from a kubeconfig file (`connectionInfo.type: KubeConfigFile`) or from the
 * service-account files of a pod (`InClusterConfig`), as kube's webhooks do.
 *
 * Kubeconfig, as kube reads it for webhooks: the context named by `current-context` (or the
 * only context) picks one `clusters[].cluster` and one `users[].user`. Supported:
 *
 * - cluster: `server` (the exact URL reviews are POSTed to), `certificate-authority` or
 *   `certificate-authority-data`;
 * - user: `client-certificate`/`client-certificate-data` with `client-key`/`client-key-data`,
 *   `token`, `tokenFile` (re-read every minute), `username` with `password`.
 *
 * Relative file paths resolve against the kubeconfig's directory; unknown fields are ignored
 * (kubeconfigs carry extensions and preferences). Settings that would silently change what is
 * trusted or sent (`insecure-skip-tls-verify`, `tls-server-name`, `proxy-url`, `exec`,
 * `auth-provider`, impersonation) are errors rather than ignored. CAs are trusted in addition
 * to the system roots (`Deno.createHttpClient`'s `caCerts`).
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { osReason, quote } from "../config/mod.ts";
import { decodePem } from "../api/mod.ts";
import { type KubeconfigFile, type NamedEntry, parseKubeconfig } from "../kubeconfig/mod.ts";

x509.cryptoProvider.set(crypto);

/** Where and how to call a webhook. */
export interface WebhookConnection {
  /** The URL the review is POSTed to, path included. */
  url: string;
  /** PEM certificates trusted for the webhook's serving certificate, besides system roots. */
  caCerts: string[];
  /** Client certificate chain and key (PEM) for mutual TLS. */
  clientCertificate?: { cert: string; key: string };
  /**
   * The `Authorization` header to send, when the user has a token or a password. A function, so
   * that credentials stay out of logged objects and token files can be re-read.
   */
  authorization?: () => Promise<string>;
}

/** Where in-cluster settings come from. */
export interface InClusterSource {
  /** Reads an environment variable. @default Deno.env.get */
  env?: (name: string) => string | undefined;
  /** The service-account directory. @default "/var/run/secrets/kubernetes.io/serviceaccount" */
  dir?: string;
}

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** Token files are re-read this often: projected service-account tokens rotate (kube: 1m). */
const TOKEN_REREAD_MS = 60_000;

const UNSUPPORTED_CLUSTER_FIELDS = ["tls-server-name", "proxy-url"];
const UNSUPPORTED_USER_FIELDS = ["exec", "auth-provider", "as", "as-uid", "as-groups"];

type Obj = Record<string, unknown>;

/**
 * The connection a kubeconfig file describes. Reads the files it names and checks every
 * certificate and key.
 *
 * @throws {Error} whose message names the file and the kubeconfig field, e.g.
 * `"webhook.kubeconfig": clusters[0].cluster.server: required field is missing`.
 */
export async function connectionFromKubeconfig(path: string): Promise<WebhookConnection> {
  const base = dirname(path);
  const fail = (message: string) => new Error(`${quote(path)}: ${message}`);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw fail(`cannot read the file: ${osReason(err)}`);
  }
  let file: KubeconfigFile;
  try {
    file = parseKubeconfig(text, path);
  } catch (err) {
    throw fail((err as Error).message);
  }

  try {
    const contexts = file.contexts;
    const current = file.currentContext;
    let context: Named;
    if (current) {
      context = contexts.find((c) => c.name === current) ??
        oops(`current-context: ${quote(current)} is not the name of an entry of contexts`);
    } else if (contexts.length === 1) {
      context = contexts[0];
    } else {
      oops("current-context: required when there is not exactly one context");
    }
    const clusterName = str(context.value, "cluster", `${context.path}.cluster`) ||
      oops(`${context.path}.cluster: required field is missing`);
    const cluster = file.clusters.find((c) => c.name === clusterName) ??
      oops(
        `${context.path}.cluster: ${quote(clusterName)} is not the name of an entry of clusters`,
      );
    const userName = str(context.value, "user", `${context.path}.user`);
    let user: Named | undefined;
    if (userName) {
      user = file.users.find((u) => u.name === userName) ??
        oops(`${context.path}.user: ${quote(userName)} is not the name of an entry of users`);
    }

    const conn: WebhookConnection = {
      url: serverUrl(cluster),
      caCerts: await clusterCa(cluster, base),
    };
    if (user) await applyUser(conn, user, base);
    checkTlsSettings(conn);
    return conn;
  } catch (err) {
    throw fail((err as Error).message);
  }
}

/**
 * The connection of a pod's service account: `https://$KUBERNETES_SERVICE_HOST:
 * $KUBERNETES_SERVICE_PORT` with the account's CA and token, as kube's `rest.InClusterConfig`.
 *
 * @throws {Error} when not running in a cluster or the service-account files are unreadable.
 */
export async function inClusterConnection(
  source: InClusterSource = {},
): Promise<WebhookConnection> {
  const env = source.env ?? ((name: string) => Deno.env.get(name));
  const dir = source.dir ?? SERVICE_ACCOUNT_DIR;
  const host = env("KUBERNETES_SERVICE_HOST");
  const port = env("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    throw new Error(
      "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set",
    );
  }
  const caPath = join(dir, "ca.crt");
  const conn: WebhookConnection = {
    url: new URL(`https://${host.includes(":") ? `[${host}]` : host}:${port}`).href,
    caCerts: [checkCertificates(await readText(caPath), quote(caPath))],
    authorization: await tokenFileAuthorization(join(dir, "token")),
  };
  checkTlsSettings(conn);
  return conn;
}

// ---------------------------------------------------------------------------------------
// Kubeconfig parts

type Named = NamedEntry;

function serverUrl(cluster: Named): string {
  const at = `${cluster.path}.server`;
  const raw = str(cluster.value, "server", at) || oops(`${at}: required field is missing`);
  let url: URL;
  try {
    url = new URL(raw.includes("://") ? raw : `https://${raw}`);
  } catch {
    oops(`${at}: ${quote(raw)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    oops(`${at}: ${quote(raw)} must be an https or http URL`);
  }
  if (url.username || url.password) oops(`${at}: must not carry credentials`);
  if (cluster.value["insecure-skip-tls-verify"] === true) {
    oops(`${cluster.path}.insecure-skip-tls-verify: is not supported; give the webhook's CA`);
  }
  for (const field of UNSUPPORTED_CLUSTER_FIELDS) {
    if (cluster.value[field] !== undefined) oops(`${cluster.path}.${field}: is not supported`);
  }
  return url.href;
}

async function clusterCa(cluster: Named, base: string): Promise<string[]> {
  const pem = await fileOrData(cluster, "certificate-authority", base);
  return pem === undefined ? [] : [checkCertificates(pem.text, pem.where)];
}

async function applyUser(conn: WebhookConnection, user: Named, base: string): Promise<void> {
  for (const field of UNSUPPORTED_USER_FIELDS) {
    if (user.value[field] !== undefined) oops(`${user.path}.${field}: is not supported`);
  }
  const cert = await fileOrData(user, "client-certificate", base);
  const key = await fileOrData(user, "client-key", base);
  if ((cert === undefined) !== (key === undefined)) {
    oops(
      cert
        ? `${user.path}: client-certificate needs client-key`
        : `${user.path}: client-key needs client-certificate`,
    );
  }
  if (cert && key) {
    checkCertificates(cert.text, cert.where);
    if (!decodePem(key.text).some((b) => /^(RSA |EC )?PRIVATE KEY$/.test(b.type))) {
      oops(`${key.where}: has no unencrypted PEM private key`);
    }
    conn.clientCertificate = { cert: cert.text, key: key.text };
  }

  const token = str(user.value, "token", `${user.path}.token`);
  const tokenFile = str(user.value, "tokenFile", `${user.path}.tokenFile`);
  const username = str(user.value, "username", `${user.path}.username`);
  const password = str(user.value, "password", `${user.path}.password`) ?? "";
  if ((token || tokenFile) && username) {
    oops(`${user.path}: give a token or a username and password, not both`);
  }
  if (token) {
    const header = `Bearer ${token}`;
    conn.authorization = () => Promise.resolve(header);
  } else if (tokenFile) {
    conn.authorization = await tokenFileAuthorization(resolve(base, tokenFile));
  } else if (username) {
    const header = `Basic ${btoa(String.fromCharCode(...utf8(`${username}:${password}`)))}`;
    conn.authorization = () => Promise.resolve(header);
  }
}

/** `<field>` (a path) or `<field>-data` (base64), not both. Returns the text and how to name it. */
async function fileOrData(
  entry: Named,
  field: string,
  base: string,
): Promise<{ text: string; where: string } | undefined> {
  const fileAt = `${entry.path}.${field}`;
  const dataAt = `${fileAt}-data`;
  const file = str(entry.value, field, fileAt);
  const data = str(entry.value, `${field}-data`, dataAt);
  if (file && data) oops(`${entry.path}: give ${field} or ${field}-data, not both`);
  if (data) {
    try {
      return {
        text: new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0))),
        where: dataAt,
      };
    } catch {
      oops(`${dataAt}: is not valid base64`);
    }
  }
  if (!file) return undefined;
  const path = isAbsolute(file) ? file : resolve(base, file);
  try {
    return { text: await Deno.readTextFile(path), where: `${fileAt} ${quote(file)}` };
  } catch (err) {
    oops(`${fileAt}: cannot read ${quote(file)}: ${osReason(err)}`);
  }
}

// ---------------------------------------------------------------------------------------
// Checks and helpers

/** The PEM text when it holds at least one parsable certificate. */
function checkCertificates(pem: string, where: string): string {
  const blocks = decodePem(pem).filter((b) => b.type === "CERTIFICATE");
  if (blocks.length === 0) oops(`${where}: has no PEM CERTIFICATE block`);
  for (const [i, block] of blocks.entries()) {
    try {
      new x509.X509Certificate(block.der);
    } catch {
      oops(`${where}: certificate ${i + 1} does not parse`);
    }
  }
  return pem;
}

/** Deno checks the client certificate and key when it builds a client: do it once, now. */
function checkTlsSettings(conn: WebhookConnection): void {
  try {
    Deno.createHttpClient({ caCerts: conn.caCerts, ...conn.clientCertificate }).close();
  } catch (err) {
    oops(`the TLS settings are not usable: ${(err as Error).message}`);
  }
}

/** A bearer token read from `path` now (it must be readable) and again every minute. */
async function tokenFileAuthorization(path: string): Promise<() => Promise<string>> {
  let token = (await readText(path)).trim();
  if (token === "") oops(`${quote(path)}: the token file is empty`);
  let readAt = Date.now();
  return async () => {
    if (Date.now() - readAt >= TOKEN_REREAD_MS) {
      readAt = Date.now();
      // A failed re-read keeps the last token: the file is replaced atomically on rotation.
      const fresh = (await Deno.readTextFile(path).catch(() => "")).trim();
      if (fresh !== "") token = fresh;
    }
    return `Bearer ${token}`;
  };
}

async function readText(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    oops(`cannot read ${quote(path)}: ${osReason(err)}`);
  }
}

function str(obj: Obj, key: string, at: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") oops(`${at}: expected a string`);
  return v;
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function oops(message: string): never {
  throw new Error(message);
}
