/**
 * The authenticated fetch: requests to one server with the credentials and TLS settings of
 * resolved {@link ClientSettings}.
 *
 * Every request carries, in kubectl's precedence: a bearer token (`--token`, the user's
 * `token`/`tokenFile`, or an exec plugin's), else basic credentials (`--username`/
 * `--password`); the client certificate (the user's, or an exec plugin's); the impersonation
 * headers (`Impersonate-User`, `Impersonate-Group` per group, `Impersonate-Uid`,
 * `Impersonate-Extra-<key>`); `Accept-Encoding: gzip` unless compression is disabled. A
 * request refused with 401 drops the exec plugin's credential (or re-reads the token file) and
 * is sent once more. `--request-timeout` bounds each exchange. `Warning` headers are handed to
 * `onWarning`.
 *
 * @example
 * ```ts
 * import { ClientConnection } from "./mod.ts";
 * const conn = await ClientConnection.fromConfig({ namespace: "default" });
 * const res = await conn.fetch("/api/v1/namespaces/default/configmaps");
 * console.log((await res.json()).items.length);
 * ```
 *
 * @module
 */

import {
  type ClientSettings,
  type ConnectionOverrides,
  defaultConfigSources,
  ExecCredentialProvider,
  loadKubeconfig,
  resolveClientSettings,
} from "../kubeconfig/mod.ts";
import { exchange, type TlsSettings } from "./transport.ts";

/** How a connection behaves, besides its settings. */
export interface ConnectionOptions {
  /** Bounds each request; 0 or absent: none. */
  requestTimeoutMs?: number;
  /** Bounds an exec plugin's run. @default the request timeout, else 60s */
  execTimeoutMs?: number;
  /** `User-Agent`. @default "platform-client" */
  userAgent?: string;
  /** Called with the text of each `Warning` header the server sends. */
  onWarning?: (warning: string) => void;
}

/** Requests to one server as one user. */
export class ClientConnection {
  readonly settings: ClientSettings;
  readonly #opts: ConnectionOptions;
  readonly #exec?: ExecCredentialProvider;
  #token?: string;

  constructor(settings: ClientSettings, opts: ConnectionOptions = {}) {
    this.settings = settings;
    this.#opts = opts;
    this.#token = settings.token;
    if (settings.exec) {
      this.#exec = new ExecCredentialProvider(settings.exec, {
        timeoutMs: opts.execTimeoutMs ?? (opts.requestTimeoutMs || undefined),
        cluster: {
          server: settings.server,
          ...(settings.tlsServerName ? { "tls-server-name": settings.tlsServerName } : {}),
          ...(settings.insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}),
          ...(settings.caPem ? { "certificate-authority-data": btoa(settings.caPem) } : {}),
          ...(settings.proxyUrl ? { "proxy-url": settings.proxyUrl } : {}),
          ...(settings.disableCompression ? { "disable-compression": true } : {}),
          ...(settings.execClusterConfig !== undefined
            ? { config: settings.execClusterConfig }
            : {}),
        },
      });
    }
  }

  /**
   * A connection from the configuration files (`--platformconfig`, `$PLATFORMCONFIG`,
   * `$HOME/.platform/config`) and command-line overrides.
   *
   * @throws {KubeconfigError} for a configuration that cannot be read or resolved.
   */
  static async fromConfig(
    overrides: ConnectionOverrides & { configFile?: string } = {},
    opts: ConnectionOptions = {},
  ): Promise<ClientConnection> {
    const config = await loadKubeconfig(defaultConfigSources(overrides.configFile));
    return new ClientConnection(await resolveClientSettings(config, overrides), opts);
  }

  /** The exec plugin of the user, when it has one (runs are counted there). */
  get execProvider(): ExecCredentialProvider | undefined {
    return this.#exec;
  }

  /**
   * Sends a request to `path` (absolute on the server, e.g. `/api/v1/namespaces`, or a full
   * URL of the same server) with the connection's credentials.
   *
   * @throws {ConnectionError} when the server cannot be reached or the timeout passes;
   * {@link ExecCredentialError} when the plugin fails.
   */
  async fetch(path: string | URL, init: RequestInit = {}): Promise<Response> {
    const url = new URL(String(path).startsWith("/") ? this.settings.server + path : path);
    const body = init.body === undefined || init.body === null
      ? undefined
      : new Uint8Array(await new Response(init.body).arrayBuffer());
    const method = (init.method ?? "GET").toUpperCase();
    const given = new Headers(init.headers);
    let res = await this.#send(url, method, given, body);
    if (res.status === 401 && await this.#refreshCredentials()) {
      await res.body?.cancel();
      res = await this.#send(url, method, given, body);
    }
    const warning = res.headers.get("warning");
    if (warning && this.#opts.onWarning) {
      for (const text of parseWarnings(warning)) this.#opts.onWarning(text);
    }
    return res;
  }

  async #send(
    url: URL,
    method: string,
    given: Headers,
    body: Uint8Array | undefined,
  ): Promise<Response> {
    const s = this.settings;
    const headers: Record<string, string> = {
      "user-agent": this.#opts.userAgent ?? "platform-client",
    };
    if (!s.disableCompression) headers["accept-encoding"] = "gzip";
    const tls: TlsSettings = {
      caPem: s.caPem,
      certPem: s.clientCertPem,
      keyPem: s.clientKeyPem,
      serverName: s.tlsServerName,
      insecure: s.insecureSkipTlsVerify,
    };
    let token = this.#token;
    if (!token && this.#exec) {
      const cred = await this.#exec.credential();
      token = cred.token;
      if (cred.clientCertificateData && !s.clientCertPem) {
        tls.certPem = cred.clientCertificateData;
        tls.keyPem = cred.clientKeyData;
      }
    }
    if (token) {
      headers["authorization"] = `Bearer ${token}`;
    } else if (s.username || s.password) {
      headers["authorization"] = `Basic ${base64Utf8(`${s.username ?? ""}:${s.password ?? ""}`)}`;
    }
    const imp = s.impersonate;
    const impersonation: [string, string][] = [];
    if (imp?.user) impersonation.push(["impersonate-user", imp.user]);
    for (const g of imp?.groups ?? []) impersonation.push(["impersonate-group", g]);
    if (imp?.uid) impersonation.push(["impersonate-uid", imp.uid]);
    for (const [k, vs] of Object.entries(imp?.extra ?? {})) {
      for (const v of vs) impersonation.push([`impersonate-extra-${encodeURIComponent(k)}`, v]);
    }
    // The caller's headers win (Headers gives their names in lower case, as ours are here).
    given.forEach((v, k) => headers[k] = v);
    // Several groups: node:http sends an array value as repeated headers.
    const grouped: Record<string, string | string[]> = { ...headers };
    for (const [k, v] of impersonation) {
      const prev = grouped[k];
      grouped[k] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
    }
    if (body) grouped["content-length"] = String(body.length);
    return await exchange(url, {
      method,
      headers: grouped as Record<string, string>,
      body,
      timeoutMs: this.#opts.requestTimeoutMs,
    }, tls);
  }

  /** After a 401: whether there is a fresher credential to try. */
  async #refreshCredentials(): Promise<boolean> {
    if (this.#exec && !this.settings.token) {
      this.#exec.invalidate();
      return true;
    }
    if (this.settings.tokenFile) {
      const fresh = (await Deno.readTextFile(this.settings.tokenFile).catch(() => "")).trim();
      if (fresh && fresh !== this.#token) {
        this.#token = fresh;
        return true;
      }
    }
    return false;
  }
}

/** The texts of a `Warning` header: `299 - "text", 299 - "other"`. */
function parseWarnings(header: string): string[] {
  const out: string[] = [];
  const re = /\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"/g;
  for (const m of header.matchAll(re)) out.push(m[1].replace(/\\(.)/g, "$1"));
  return out;
}

function base64Utf8(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}
