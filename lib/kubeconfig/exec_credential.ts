/**
 * Credential plugins (`ExecCredential`): the client runs the user's `exec` program, which
 * prints an ExecCredential whose `status` holds a bearer token or a client certificate and key.
 *
 * The exchange, as kube's client runs it:
 *
 * - the program gets the client's environment plus the block's `env`, and
 *   `KUBERNETES_EXEC_INFO`: an ExecCredential (the block's `apiVersion`) whose `spec` has
 *   `interactive` and, with `provideClusterInfo`, `cluster` (server, CA data, TLS name, …);
 * - stdin is the terminal's only when interactive (`interactiveMode` is not `Never` and stdin
 *   is a terminal; `Always` without a terminal is an error); otherwise it is empty;
 * - stdout must be an ExecCredential of the same version (kube's and our spelling of a version
 *   are the same version) with a `status` holding `token`, or `clientCertificateData` with
 *   `clientKeyData`;
 * - the credential is kept until its `expirationTimestamp` (for ever without one); a request
 *   refused with 401 drops it ({@link ExecCredentialProvider.invalidate}), so the next one
 *   runs the program again;
 * - a program that is missing, fails, prints something else or runs longer than the timeout is
 *   an {@link ExecCredentialError} quoting its stderr.
 *
 * @module
 */

import type { ExecConfig } from "./exec_config.ts";
import { isObj, quote } from "./parse.ts";

/** What a plugin returned. */
export interface ExecCredentialStatus {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** Milliseconds since the epoch; absent: the credential does not expire. */
  expiresAt?: number;
}

/** The cluster a plugin is told about with `provideClusterInfo` (kube's field names). */
export interface ExecClusterInfo {
  server: string;
  "tls-server-name"?: string;
  "insecure-skip-tls-verify"?: boolean;
  /** Base64 of the PEM CA. */
  "certificate-authority-data"?: string;
  "proxy-url"?: string;
  "disable-compression"?: boolean;
  config?: unknown;
}

/** How a provider runs its plugin. */
export interface ExecCredentialOptions {
  /** Sent as `spec.cluster` when the block says `provideClusterInfo`. */
  cluster?: ExecClusterInfo;
  /** How long the program may run. @default 60_000 */
  timeoutMs?: number;
  /** Whether stdin is a terminal. @default Deno.stdin.isTerminal() */
  stdinIsTerminal?: boolean;
  /** The clock, for expiry. @default Date.now */
  now?: () => number;
}

/** A plugin that could not give a credential. The message is one line, quoting its stderr. */
export class ExecCredentialError extends Error {
  override name = "ExecCredentialError";
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** The most of the plugin's stderr a message quotes. */
const STDERR_QUOTED = 500;

/** Runs one `exec` block's plugin and keeps its credential while it is valid. */
export class ExecCredentialProvider {
  readonly #config: ExecConfig;
  readonly #opts: ExecCredentialOptions;
  #cached?: ExecCredentialStatus;
  #running?: Promise<ExecCredentialStatus>;
  /** How many times the program ran (for tests and diagnostics). */
  runs = 0;

  constructor(config: ExecConfig, opts: ExecCredentialOptions = {}) {
    this.#config = config;
    this.#opts = opts;
  }

  /** The credential: the cached one while it has not expired, else a fresh one. */
  credential(): Promise<ExecCredentialStatus> {
    const now = (this.#opts.now ?? Date.now)();
    const cached = this.#cached;
    if (cached && (cached.expiresAt === undefined || now < cached.expiresAt)) {
      return Promise.resolve(cached);
    }
    // Concurrent requests share one run.
    this.#running ??= this.#run().then(
      (status) => {
        this.#cached = status;
        this.#running = undefined;
        return status;
      },
      (err) => {
        this.#running = undefined;
        throw err;
      },
    );
    return this.#running;
  }

  /** Drops the cached credential (the server refused it): the next request runs the plugin. */
  invalidate(): void {
    this.#cached = undefined;
  }

  async #run(): Promise<ExecCredentialStatus> {
    const cfg = this.#config;
    const terminal = this.#opts.stdinIsTerminal ?? Deno.stdin.isTerminal();
    if (cfg.interactiveMode === "Always" && !terminal) {
      fail("exec plugin cannot support interactive mode: standard input is not a terminal");
    }
    const interactive = cfg.interactiveMode !== "Never" && terminal;
    const spec: Record<string, unknown> = { interactive };
    if (cfg.provideClusterInfo && this.#opts.cluster) spec.cluster = this.#opts.cluster;
    const info = { kind: "ExecCredential", apiVersion: cfg.apiVersion, spec };
    const env: Record<string, string> = { KUBERNETES_EXEC_INFO: JSON.stringify(info) };
    for (const e of cfg.env) env[e.name] = e.value;
    const timeoutMs = this.#opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.runs++;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(cfg.command, {
        args: cfg.args,
        env,
        stdin: interactive ? "inherit" : "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) {
        fail(
          `exec: executable ${cfg.command} not found` +
            (cfg.installHint ? ` (${oneLine(cfg.installHint)})` : ""),
        );
      }
      fail(`exec: cannot run ${cfg.command}: ${(err as Error).message}`);
    }
    const output = child.output();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const first = await Promise.race([output, timedOut]);
    clearTimeout(timer);
    if (first === "timeout") {
      try {
        child.kill("SIGKILL");
      } catch { /* it ended meanwhile */ }
      // Its output is not waited for: a grandchild may hold the pipes open.
      output.catch(() => {});
      fail(`exec: executable ${cfg.command} did not finish within ${timeoutMs}ms`);
    }
    const out = first;
    const stderr = oneLine(new TextDecoder().decode(out.stderr)).slice(0, STDERR_QUOTED);
    const withStderr = (message: string) => stderr ? `${message}; stderr: ${stderr}` : message;
    if (!out.success) {
      fail(withStderr(`exec: executable ${cfg.command} failed with exit code ${out.code}`));
    }
    return readCredential(new TextDecoder().decode(out.stdout), cfg.apiVersion, withStderr);
  }
}

/** The status of the ExecCredential a plugin printed. */
function readCredential(
  stdout: string,
  apiVersion: string,
  withStderr: (m: string) => string,
): ExecCredentialStatus {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    const shown = oneLine(stdout).slice(0, 80);
    fail(withStderr(`decoding stdout: not an ExecCredential in JSON: ${quote(shown)}`));
  }
  if (!isObj(doc) || doc.kind !== "ExecCredential") {
    fail(withStderr("decoding stdout: not an ExecCredential (kind must be ExecCredential)"));
  }
  const returned = String(doc.apiVersion ?? "");
  if (sameVersion(returned) !== sameVersion(apiVersion)) {
    fail(
      `exec plugin is configured to use API version ${apiVersion}, plugin returned version ` +
        (returned || "(none)"),
    );
  }
  const status = doc.status;
  if (!isObj(status)) fail(withStderr("exec plugin didn't return a status field"));
  const str = (k: string) => typeof status[k] === "string" && status[k] !== "" ? status[k] : "";
  const token = str("token");
  const cert = str("clientCertificateData");
  const key = str("clientKeyData");
  if (!token && !cert && !key) {
    fail(withStderr("exec plugin didn't return a token or cert/key pair"));
  }
  if (!cert !== !key) fail("exec plugin returned only certificate or key, not both");
  const out: ExecCredentialStatus = {};
  if (token) out.token = token;
  if (cert) {
    out.clientCertificateData = cert;
    out.clientKeyData = key;
  }
  if (status.expirationTimestamp !== undefined && status.expirationTimestamp !== null) {
    const at = Date.parse(String(status.expirationTimestamp));
    if (Number.isNaN(at)) {
      fail(
        `exec plugin returned an invalid expirationTimestamp ${
          quote(String(status.expirationTimestamp))
        }`,
      );
    }
    out.expiresAt = at;
  }
  return out;
}

/** `client.authentication.k8s.io/v1` and `client.authentication.platform.io/v1` are one. */
function sameVersion(apiVersion: string): string {
  return apiVersion.replace(
    /^client\.authentication\.k8s\.io\//,
    "client.authentication.platform.io/",
  );
}

function oneLine(text: string): string {
  return text.trim().split(/\r?\n/).map((l) => l.trim()).filter((l) => l).join(" | ");
}

function fail(message: string): never {
  throw new ExecCredentialError(`getting credentials: ${message}`);
}
