/**
 * The `--egress-selector-config-file` file (`EgressSelectorConfiguration`, spec 03): for each
 * kind of outbound traffic (`controlplane`, `etcd`, `cluster`), whether it goes `Direct` or
 * through an HTTP CONNECT proxy. Loaded and validated at start, with every problem reported at
 * once (file and field path), as the other configuration files are; `platform check-config`
 * runs the same checks.
 *
 * Accepted `apiVersion`s: `apiserver.platform.io/v1beta1` and kube's `apiserver.k8s.io/v1beta1`
 * and `/v1alpha1`. Unknown fields are errors.
 *
 * Rules, as kube's unless noted:
 * - `egressSelections[].name`: `controlplane`, `etcd`, `cluster` (case-insensitive), each at
 *   most once; `master` is accepted as `controlplane`, with a deprecation warning.
 * - `connection.proxyProtocol`: `Direct` (no `transport`), `HTTPConnect` (a `transport` with
 *   exactly one of `tcp` and `uds`), or `GRPC` (only over `uds`; then refused, since this
 *   server does not speak konnectivity's gRPC tunnel: here, and not at the first call).
 * - `tcp.url`: `http://` (no TLS settings) or `https://` (`tlsConfig` with `clientCert` and
 *   `clientKey`, a matching pair; `caBundle` optional, the system roots otherwise).
 * - `uds.udsName`: a socket path, without a `unix://` prefix (refused with it, where kube would
 *   fail at the first call).
 * - Relative file and socket paths resolve against this file's directory (kube: the working
 *   directory).
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { dirname, resolve } from "node:path";
import { decodePem } from "../api/mod.ts";
import type { EgressConnection, EgressProxy, EgressSelections } from "../egress/mod.ts";
import { ConfigError, osReason, quote } from "./config_error.ts";
import { readKeyPair } from "./key_pair.ts";
import { describeValue } from "./schema_issues.ts";
import { parseYamlConfig, readConfigFile } from "./yaml_file.ts";

export const EGRESS_SELECTOR_CONFIG_API_VERSIONS = [
  "apiserver.platform.io/v1beta1",
  "apiserver.k8s.io/v1beta1",
  "apiserver.k8s.io/v1alpha1",
] as const;
export const EGRESS_SELECTOR_CONFIG_KIND = "EgressSelectorConfiguration";

/** A loaded configuration: the selections, and warnings to log (deprecated names). */
export interface EgressSelectorConfig {
  selections: EgressSelections;
  warnings: string[];
}

const NAMES = ["cluster", "controlplane", "etcd", "master"];
const PROTOCOLS = ["Direct", "HTTPConnect", "GRPC"];

type Obj = Record<string, unknown>;

/**
 * Reads and checks an `EgressSelectorConfiguration` file, reading the TLS files it names.
 *
 * @throws {ConfigError} one line per problem, each `<file>: <field path>: <what is wrong>`.
 */
export async function loadEgressSelectorConfig(
  path: string,
  opts: { cwd?: string } = {},
): Promise<EgressSelectorConfig> {
  const file = resolve(opts.cwd ?? Deno.cwd(), path);
  const text = await readConfigFile("--egress-selector-config-file", path, file);
  const data = parseYamlConfig(text, path);
  if (data === null || data === undefined) {
    throw new ConfigError(
      `${path}: the file is empty; expected apiVersion: ` +
        `${EGRESS_SELECTOR_CONFIG_API_VERSIONS[0]} and kind: ${EGRESS_SELECTOR_CONFIG_KIND}`,
    );
  }
  if (!isObj(data)) {
    throw new ConfigError(`${path}: expected a mapping, got ${describeValue(data)}`);
  }
  const checker = new Checker(dirname(file));
  const config = await checker.file(data);
  if (checker.errors.length > 0) {
    throw new ConfigError(checker.errors.map((e) => `${path}: ${e}`).join("\n"));
  }
  return config;
}

class Checker {
  readonly errors: string[] = [];
  constructor(readonly base: string) {}

  error(at: string, message: string): void {
    this.errors.push(`${at}: ${message}`);
  }

  /** Reports fields of `obj` not in `known`; false when `obj` is not a mapping. */
  fields(obj: unknown, at: string, known: string[]): obj is Obj {
    if (!isObj(obj)) {
      this.error(at, `expected a mapping, got ${describeValue(obj)}`);
      return false;
    }
    for (const key of Object.keys(obj)) {
      if (!known.includes(key)) this.error(at ? `${at}.${key}` : key, "unknown field");
    }
    return true;
  }

  /** The string at `obj[key]`: undefined (reported when required) when absent or not one. */
  str(obj: Obj, key: string, at: string, required: boolean): string | undefined {
    const v = obj[key];
    if (v === undefined || v === null) {
      if (required) this.error(`${at}.${key}`, "Required value");
      return undefined;
    }
    if (typeof v !== "string") {
      this.error(`${at}.${key}`, `expected a string, got ${describeValue(v)}`);
      return undefined;
    }
    return v;
  }

  async file(data: Obj): Promise<EgressSelectorConfig> {
    const out: EgressSelectorConfig = { selections: {}, warnings: [] };
    this.fields(data, "", ["apiVersion", "kind", "egressSelections"]);
    const apiVersion = this.str(data, "apiVersion", "", true);
    if (
      apiVersion !== undefined && !EGRESS_SELECTOR_CONFIG_API_VERSIONS.includes(apiVersion as never)
    ) {
      this.error(
        "apiVersion",
        `${quote(apiVersion)} is not one of ${
          EGRESS_SELECTOR_CONFIG_API_VERSIONS.map(quote).join(", ")
        }`,
      );
    }
    const kind = this.str(data, "kind", "", true);
    if (kind !== undefined && kind !== EGRESS_SELECTOR_CONFIG_KIND) {
      this.error("kind", `expected ${quote(EGRESS_SELECTOR_CONFIG_KIND)}, got ${quote(kind)}`);
    }
    const list = data.egressSelections;
    if (!Array.isArray(list)) {
      this.error(
        "egressSelections",
        list === undefined ? "Required value" : `expected a list, got ${describeValue(list)}`,
      );
      return out;
    }
    const seenAt = new Map<string, number>();
    for (const [i, raw] of list.entries()) {
      const at = `egressSelections[${i}]`;
      if (!this.fields(raw, at, ["name", "connection"])) continue;
      const written = this.str(raw, "name", at, true);
      let name = written?.toLowerCase();
      if (name !== undefined && !NAMES.includes(name)) {
        this.error(
          `${at}.name`,
          `Unsupported value: ${quote(written!)}: supported values: ${NAMES.map(quote).join(", ")}`,
        );
        name = undefined;
      }
      if (name === "master") {
        name = "controlplane";
        out.warnings.push(
          `${at}.name: "master" is deprecated, use "controlplane" (the selection is used as controlplane)`,
        );
      }
      if (name !== undefined) {
        const first = seenAt.get(name);
        if (first !== undefined) {
          this.error(
            `${at}.name`,
            `Duplicate value: ${quote(name)} (egressSelections[${first}] selects it too)`,
          );
          name = undefined;
        } else seenAt.set(name, i);
      }
      const connection = raw.connection === undefined
        ? (this.error(`${at}.connection`, "Required value"), undefined)
        : await this.connection(raw.connection, `${at}.connection`);
      if (name !== undefined && connection !== undefined) {
        out.selections[name as keyof EgressSelections] = connection;
      }
    }
    return out;
  }

  async connection(raw: unknown, at: string): Promise<EgressConnection | undefined> {
    if (!this.fields(raw, at, ["proxyProtocol", "transport"])) return undefined;
    const protocol = this.str(raw, "proxyProtocol", at, true);
    if (protocol === undefined) return undefined;
    if (!PROTOCOLS.includes(protocol)) {
      this.error(
        `${at}.proxyProtocol`,
        `Unsupported value: ${quote(protocol)}: supported values: ${
          PROTOCOLS.map(quote).join(", ")
        }`,
      );
      return undefined;
    }
    const transport = raw.transport;
    const tAt = `${at}.transport`;
    if (protocol === "Direct") {
      if (transport !== undefined && transport !== null) {
        this.error(tAt, "must be absent with proxyProtocol Direct");
        return undefined;
      }
      return { protocol: "Direct" };
    }
    if (transport === undefined || transport === null) {
      this.error(tAt, `Required value: proxyProtocol ${protocol} needs a transport (tcp or uds)`);
      return undefined;
    }
    if (!this.fields(transport, tAt, ["tcp", "uds"])) return undefined;
    const { tcp, uds } = transport;
    if (protocol === "GRPC") {
      if (tcp !== undefined) {
        this.error(`${tAt}.tcp`, "the GRPC protocol is not supported over tcp: use uds");
      } else if (uds === undefined) {
        this.error(`${tAt}.uds`, "Required value: the GRPC protocol needs uds");
      } else if (this.uds(uds, `${tAt}.uds`) !== undefined) {
        this.error(
          `${at}.proxyProtocol`,
          `"GRPC" is not supported by this server (it does not speak konnectivity's gRPC ` +
            `tunnel); use HTTPConnect over the same uds (konnectivity-server --mode=http-connect)`,
        );
      }
      return undefined;
    }
    if (tcp !== undefined && uds !== undefined) {
      this.error(tAt, "tcp and uds cannot both be set");
      return undefined;
    }
    if (tcp === undefined && uds === undefined) {
      this.error(tAt, "Required value: one of tcp or uds must be set");
      return undefined;
    }
    const proxy = tcp !== undefined
      ? await this.tcp(tcp, `${tAt}.tcp`)
      : this.uds(uds, `${tAt}.uds`);
    return proxy && { protocol: "HTTPConnect", proxy };
  }

  uds(raw: unknown, at: string): EgressProxy | undefined {
    if (!this.fields(raw, at, ["udsName"])) return undefined;
    const name = this.str(raw, "udsName", at, true);
    if (name === undefined) return undefined;
    if (name === "") {
      this.error(`${at}.udsName`, "Required value: the proxy's socket path");
      return undefined;
    }
    if (name.startsWith("unix://")) {
      this.error(`${at}.udsName`, `${quote(name)}: a socket path, without the unix:// prefix`);
      return undefined;
    }
    return { transport: "uds", udsName: resolve(this.base, name) };
  }

  async tcp(raw: unknown, at: string): Promise<EgressProxy | undefined> {
    if (!this.fields(raw, at, ["url", "tlsConfig"])) return undefined;
    const url = this.str(raw, "url", at, true);
    if (url === undefined) return undefined;
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !["http:", "https:"].includes(parsed.protocol) || !parsed.hostname) {
      this.error(
        `${at}.url`,
        `${quote(url)}: supported connection protocols are http:// and https://`,
      );
      return undefined;
    }
    const tlsAt = `${at}.tlsConfig`;
    const tls = raw.tlsConfig;
    if (
      tls !== undefined && tls !== null &&
      !this.fields(tls, tlsAt, ["caBundle", "clientKey", "clientCert"])
    ) {
      return undefined;
    }
    const tlsObj = (tls ?? {}) as Obj;
    const files = {
      caBundle: this.str(tlsObj, "caBundle", tlsAt, false) || undefined,
      clientCert: this.str(tlsObj, "clientCert", tlsAt, false) || undefined,
      clientKey: this.str(tlsObj, "clientKey", tlsAt, false) || undefined,
    };
    if (parsed.protocol === "http:") {
      for (const [field, value] of Object.entries(files)) {
        if (value !== undefined) {
          this.error(`${tlsAt}.${field}`, "must be absent with an http:// url");
        }
      }
      return { transport: "tcp", url };
    }
    if (tls === undefined || tls === null) {
      this.error(tlsAt, "Required value: an https:// url needs clientCert and clientKey");
      return undefined;
    }
    if (!files.clientCert) {
      this.error(`${tlsAt}.clientCert`, "Required value: with an https:// url");
    }
    if (!files.clientKey) this.error(`${tlsAt}.clientKey`, "Required value: with an https:// url");
    const caBundle = files.caBundle
      ? await this.caBundle(files.caBundle, `${tlsAt}.caBundle`)
      : undefined;
    if (!files.clientCert || !files.clientKey) return undefined;
    try {
      const pair = await readKeyPair(
        {
          path: resolve(this.base, files.clientCert),
          where: `${tlsAt}.clientCert`,
          shown: files.clientCert,
        },
        {
          path: resolve(this.base, files.clientKey),
          where: `${tlsAt}.clientKey`,
          shown: files.clientKey,
        },
      );
      if (files.caBundle && caBundle === undefined) return undefined;
      return {
        transport: "tcp",
        url,
        tls: { caBundle, clientCert: pair.certPem, clientKey: pair.keyPem },
      };
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.errors.push(err.message);
      return undefined;
    }
  }

  async caBundle(path: string, at: string): Promise<string | undefined> {
    let pem: string;
    try {
      pem = await Deno.readTextFile(resolve(this.base, path));
    } catch (err) {
      this.error(at, `cannot read ${quote(path)}: ${osReason(err)}`);
      return undefined;
    }
    const blocks = decodePem(pem).filter((b) => b.type === "CERTIFICATE");
    try {
      if (blocks.length === 0) throw new Error();
      for (const b of blocks) new x509.X509Certificate(b.der);
    } catch {
      this.error(at, `${quote(path)} has no valid PEM CERTIFICATE block`);
      return undefined;
    }
    return pem;
  }
}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
