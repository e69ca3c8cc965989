/**
 * The `--encryption-provider-config` file (`EncryptionConfiguration`): which resources are
 * encrypted at rest, with which providers and keys. Loaded and validated at start with every
 * problem reported at once (file and field path), as the other configuration files are.
 *
 * Accepted `apiVersion`s: `apiserver.config.platform.io/v1` and kube's
 * `apiserver.config.k8s.io/v1`. Unknown fields are errors.
 *
 * Rules, as kube's:
 * - `resources`: at least one entry; each with at least one resource and one provider.
 * - A resource is `<resource>` (core group), `<resource>.<group>`, `*.<group>` (every resource
 *   of a group), `*.` (every core resource) or `*.*` (everything, custom resources too);
 *   lower-case. An entry that an earlier one already covers (the same name, or a wildcard
 *   before it) is an error, since it would never apply: put specific entries (an `identity`
 *   opt-out, say) before wildcards.
 * - Each provider entry names exactly one provider: `aescbc`, `aesgcm`, `secretbox` (with
 *   `keys`) or `identity: {}`. The first provider encrypts new writes (with its first key);
 *   all of them decrypt.
 * - Keys: at least one per provider; `name` non-empty, unique in the provider, without `:`;
 *   `secret` base64 of 16, 24 or 32 bytes (`aescbc`, `aesgcm`) or 32 bytes (`secretbox`).
 * @module
 */

import { resolve } from "node:path";
import { Buffer } from "node:buffer";
import {
  ConfigError,
  describeValue,
  parseYamlConfig,
  quote,
  readConfigFile,
} from "../config/mod.ts";
import type { CipherProvider } from "./providers.ts";

export const ENCRYPTION_CONFIG_API_VERSIONS = [
  "apiserver.config.platform.io/v1",
  "apiserver.config.k8s.io/v1",
] as const;
export const ENCRYPTION_CONFIG_KIND = "EncryptionConfiguration";

/** A validated configuration: the rules in file order (the first that matches a resource
 * decides). */
export interface EncryptionConfig {
  rules: EncryptionRule[];
}

export interface EncryptionRule {
  /** As written: `secrets`, `deployments.apps`, `*.apps`, `*.`, `*.*`. */
  resources: string[];
  /** In order: the first encrypts, every one decrypts. */
  providers: ProviderConfig[];
}

export type ProviderConfig =
  | { type: "identity" }
  | { type: CipherProvider; keys: { name: string; secret: Uint8Array }[] };

const CIPHER_PROVIDERS: readonly CipherProvider[] = ["aescbc", "aesgcm", "secretbox"];
const PROVIDERS = [...CIPHER_PROVIDERS, "identity"] as const;
const KEY_SIZES: Record<CipherProvider, number[]> = {
  aescbc: [16, 24, 32],
  aesgcm: [16, 24, 32],
  secretbox: [32],
};
const RESOURCE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GROUP = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

type Obj = Record<string, unknown>;

/**
 * Reads and validates an `EncryptionConfiguration` file.
 *
 * @throws {ConfigError} listing every problem, one per line, each naming the file and the
 * field, e.g. `enc.yaml: resources[0].providers[0].aesgcm.keys[0].secret: must be the base64
 * of 16, 24 or 32 bytes, got 7 bytes`.
 * @example
 * ```ts
 * const config = await loadEncryptionConfig("/etc/platform/encryption.yaml");
 * const transformer = new EncryptionTransformer(config);
 * ```
 */
export async function loadEncryptionConfig(
  path: string,
  opts: { cwd?: string } = {},
): Promise<EncryptionConfig> {
  const file = resolve(opts.cwd ?? Deno.cwd(), path);
  const text = await readConfigFile("--encryption-provider-config", path, file);
  return parseEncryptionConfig(text, path);
}

/** Validates the text of an `EncryptionConfiguration` file; `path` names it in errors. */
export function parseEncryptionConfig(text: string, path: string): EncryptionConfig {
  const data = parseYamlConfig(text, path);
  if (data === null || data === undefined) {
    throw new ConfigError(
      `${path}: the file is empty; expected apiVersion: ${ENCRYPTION_CONFIG_API_VERSIONS[0]} ` +
        `and kind: ${ENCRYPTION_CONFIG_KIND}`,
    );
  }
  const checker = new Checker();
  const config = checker.file(data);
  if (checker.errors.length > 0) {
    throw new ConfigError(checker.errors.map((e) => `${path}: ${e}`).join("\n"));
  }
  return config;
}

/** What a resource entry matches: a group (`*` any) and a resource (`*` any). */
interface Pattern {
  group: string;
  resource: string;
  at: string;
}

class Checker {
  readonly errors: string[] = [];

  error(at: string, message: string): void {
    this.errors.push(at === "" ? message : `${at}: ${message}`);
  }

  fields(raw: Obj, at: string, allowed: string[]): void {
    for (const k of Object.keys(raw)) {
      if (!allowed.includes(k)) this.error(at === "" ? k : `${at}.${k}`, "unknown field");
    }
  }

  list(raw: Obj, field: string, at: string): unknown[] | undefined {
    const v = raw[field];
    const where = at === "" ? field : `${at}.${field}`;
    if (v === undefined || v === null) {
      this.error(where, "required");
      return undefined;
    }
    if (!Array.isArray(v)) {
      this.error(where, `expected a list, got ${describeValue(v)}`);
      return undefined;
    }
    if (v.length === 0) this.error(where, "must not be empty");
    return v;
  }

  file(data: unknown): EncryptionConfig {
    if (!isObj(data)) {
      this.error("", `expected a mapping, got ${describeValue(data)}`);
      return { rules: [] };
    }
    this.fields(data, "", ["apiVersion", "kind", "resources"]);
    const { apiVersion, kind } = data;
    if (typeof apiVersion !== "string") {
      this.error("apiVersion", `required: one of ${ENCRYPTION_CONFIG_API_VERSIONS.join(", ")}`);
    } else if (!(ENCRYPTION_CONFIG_API_VERSIONS as readonly string[]).includes(apiVersion)) {
      this.error(
        "apiVersion",
        `${quote(apiVersion)} is not one of ${ENCRYPTION_CONFIG_API_VERSIONS.join(", ")}`,
      );
    }
    if (kind !== ENCRYPTION_CONFIG_KIND) {
      this.error("kind", `expected ${quote(ENCRYPTION_CONFIG_KIND)}, got ${quote(kind)}`);
    }
    const entries = this.list(data, "resources", "") ?? [];
    const seen: Pattern[] = [];
    const rules: EncryptionRule[] = [];
    for (const [i, raw] of entries.entries()) {
      const at = `resources[${i}]`;
      if (!isObj(raw)) {
        this.error(at, `expected a mapping, got ${describeValue(raw)}`);
        continue;
      }
      this.fields(raw, at, ["resources", "providers"]);
      const resources: string[] = [];
      for (const [j, name] of (this.list(raw, "resources", at) ?? []).entries()) {
        const p = this.resource(name, `${at}.resources[${j}]`, seen);
        if (p) {
          seen.push(p);
          resources.push(name as string);
        }
      }
      const providers: ProviderConfig[] = [];
      for (const [k, p] of (this.list(raw, "providers", at) ?? []).entries()) {
        const provider = this.provider(p, `${at}.providers[${k}]`);
        if (provider) providers.push(provider);
      }
      rules.push({ resources, providers });
    }
    return { rules };
  }

  resource(name: unknown, at: string, seen: Pattern[]): Pattern | undefined {
    if (typeof name !== "string") {
      this.error(at, `expected a resource name, got ${describeValue(name)}`);
      return undefined;
    }
    const pattern = parseResource(name);
    if (typeof pattern === "string") {
      this.error(at, `${quote(name)}: ${pattern}`);
      return undefined;
    }
    const earlier = seen.find((s) => covers(s, pattern));
    if (earlier) {
      this.error(
        at,
        `${quote(name)} is already covered by ${earlier.at}; an entry after it would never ` +
          `apply (list specific resources before wildcards)`,
      );
      return undefined;
    }
    return { ...pattern, at };
  }

  provider(raw: unknown, at: string): ProviderConfig | undefined {
    if (!isObj(raw)) {
      this.error(at, `expected a mapping with one provider, got ${describeValue(raw)}`);
      return undefined;
    }
    const names = Object.keys(raw);
    if (names.length !== 1) {
      this.error(
        at,
        names.length === 0
          ? `one provider is required: ${PROVIDERS.join(", ")}`
          : `exactly one provider may be given per entry, got ${names.join(", ")}`,
      );
      return undefined;
    }
    const type = names[0];
    const where = `${at}.${type}`;
    const body = raw[type];
    if (type === "kms") {
      this.error(where, "the kms provider is not supported by this server");
      return undefined;
    }
    if (!(PROVIDERS as readonly string[]).includes(type)) {
      this.error(where, `unknown provider; expected one of ${PROVIDERS.join(", ")}`);
      return undefined;
    }
    if (type === "identity") {
      if (body !== null && body !== undefined && !isObj(body)) {
        this.error(where, `expected {}, got ${describeValue(body)}`);
      } else if (isObj(body)) this.fields(body, where, []);
      return { type: "identity" };
    }
    if (!isObj(body)) {
      this.error(where, `expected a mapping with keys, got ${describeValue(body)}`);
      return undefined;
    }
    this.fields(body, where, ["keys"]);
    const cipher = type as CipherProvider;
    const keys: { name: string; secret: Uint8Array }[] = [];
    const names_ = new Map<string, number>();
    for (const [n, key] of (this.list(body, "keys", where) ?? []).entries()) {
      const kat = `${where}.keys[${n}]`;
      if (!isObj(key)) {
        this.error(kat, `expected a mapping with name and secret, got ${describeValue(key)}`);
        continue;
      }
      this.fields(key, kat, ["name", "secret"]);
      const { name, secret } = key;
      let ok = true;
      if (typeof name !== "string" || name === "") {
        this.error(`${kat}.name`, "required");
        ok = false;
      } else if (name.includes(":")) {
        this.error(`${kat}.name`, `${quote(name)} must not contain ":"`);
        ok = false;
      } else if (names_.has(name)) {
        this.error(
          `${kat}.name`,
          `${quote(name)} is already the name of keys[${names_.get(name)}]`,
        );
        ok = false;
      } else names_.set(name, n);
      const bytes = this.secret(secret, `${kat}.secret`, KEY_SIZES[cipher]);
      if (ok && bytes) keys.push({ name: name as string, secret: bytes });
    }
    return { type: cipher, keys };
  }

  secret(value: unknown, at: string, sizes: number[]): Uint8Array | undefined {
    if (typeof value !== "string" || value === "") {
      this.error(at, "required: the base64 of a random key");
      return undefined;
    }
    if (!BASE64.test(value)) {
      this.error(at, "is not valid base64");
      return undefined;
    }
    const bytes = new Uint8Array(Buffer.from(value, "base64"));
    if (!sizes.includes(bytes.length)) {
      this.error(
        at,
        `must be the base64 of ${sizes.join(", ").replace(/, (\d+)$/, " or $1")} bytes, ` +
          `got ${bytes.length} bytes`,
      );
      return undefined;
    }
    return bytes;
  }
}

/**
 * A resource entry as the group and resource it matches (`*` for any), or why it is not one.
 * `secrets` is the core group's; `deployments.apps`, `*.apps`, `*.` (core), `*.*`.
 */
export function parseResource(name: string): { group: string; resource: string } | string {
  if (name !== name.toLowerCase()) return "resource names must be lower-case";
  if (name === "*") {
    return `use "*." for every resource of the core group or "*.*" for every resource`;
  }
  if (name.includes("/")) return "subresources cannot be encrypted on their own";
  const dot = name.indexOf(".");
  const resource = dot < 0 ? name : name.slice(0, dot);
  const group = dot < 0 ? "" : name.slice(dot + 1);
  if (resource !== "*" && !RESOURCE.test(resource)) {
    return "expected <resource>, <resource>.<group>, *.<group>, *. or *.*";
  }
  if (group !== "" && group !== "*" && !GROUP.test(group)) {
    return `${quote(group)} is not an API group name`;
  }
  if (resource !== "*" && group === "*") return `"<resource>.*" is not allowed; use "*.*"`;
  return { group, resource };
}

/** Whether every resource `b` matches is matched by `a`. */
function covers(a: { group: string; resource: string }, b: { group: string; resource: string }) {
  const group = a.group === "*" || a.group === b.group;
  const resource = a.resource === "*" || a.resource === b.resource;
  return group && resource;
}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
