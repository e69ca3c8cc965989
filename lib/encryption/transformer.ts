/**
 * Encryption at rest as a storage {@link ValueTransformer}: the store keys
 * (`/registry/<group|core>/<resource>/…`) say which rule of the configuration applies; values
 * of resources no rule names are stored as they are, without any cost.
 * @module
 */

import { canonicalGroup } from "../api/mod.ts";
import {
  type ReadValue,
  unreadableStored,
  unreadableValue,
  type ValueTransformer,
} from "../storage/mod.ts";
import { type EncryptionConfig, parseResource } from "./config.ts";
import { ENCRYPTED_PREFIX, type KeyCipher, keyCipher } from "./providers.ts";

/** How the values of one resource are written and read. */
interface ResourceCodec {
  /** Undefined when the first provider is identity. */
  writer: KeyCipher | undefined;
  /** In provider order; `identity` reads every value without the encrypted prefix. */
  readers: (KeyCipher | "identity")[];
}

/** Values of resources without a rule: stored in clear, and encrypted ones cannot be read. */
const UNCONFIGURED: ResourceCodec = { writer: undefined, readers: ["identity"] };

/**
 * Encrypts the values of the resources an {@link EncryptionConfig} names.
 *
 * @example
 * ```ts
 * const t = new EncryptionTransformer(await loadEncryptionConfig("enc.yaml"));
 * const stored = t.toStorage("/registry/core/secrets/default/s1", '{"kind":"Secret"}');
 * t.fromStorage("/registry/core/secrets/default/s1", stored).value; // '{"kind":"Secret"}'
 * ```
 */
export class EncryptionTransformer implements ValueTransformer {
  readonly #rules: { patterns: { group: string; resource: string }[]; codec: ResourceCodec }[];
  /** By `<group|core>/<resource>` of the key. */
  readonly #byResource = new Map<string, ResourceCodec>();

  constructor(config: EncryptionConfig) {
    this.#rules = config.rules.map((rule) => {
      const readers: (KeyCipher | "identity")[] = [];
      for (const p of rule.providers) {
        if (p.type === "identity") readers.push("identity");
        else for (const k of p.keys) readers.push(keyCipher(p.type, k.name, k.secret));
      }
      const first = readers[0];
      return {
        patterns: rule.resources.map((r) =>
          parseResource(r) as { group: string; resource: string }
        ),
        codec: { writer: first === "identity" ? undefined : first, readers },
      };
    });
  }

  /** Whether values of `key`'s resource are encrypted by new writes. */
  encrypts(key: string): boolean {
    return this.#codec(key).writer !== undefined;
  }

  toStorage(key: string, value: string): string {
    const stored = unreadableStored(value);
    if (stored !== undefined) return stored;
    const writer = this.#codec(key).writer;
    return writer ? writer.encrypt(key, value) : value;
  }

  fromStorage(key: string, stored: string): ReadValue {
    const codec = this.#codec(key);
    const encrypted = stored.startsWith(ENCRYPTED_PREFIX);
    for (const reader of codec.readers) {
      if (reader === "identity") {
        if (!encrypted) return { value: stored, stale: codec.writer !== undefined };
        continue;
      }
      if (!stored.startsWith(reader.prefix)) continue;
      const value = reader.decrypt(key, stored);
      if (value !== undefined) return { value, stale: reader !== codec.writer };
    }
    const error = !encrypted
      ? "the value is stored in clear text and the identity provider is not configured " +
        "for this resource"
      : codec === UNCONFIGURED
      ? `the value is encrypted (${prefixOf(stored)}) but this resource has no encryption ` +
        "configured"
      : `no configured provider key can decrypt the value (stored with ${prefixOf(stored)})`;
    return { value: unreadableValue(stored, error), stale: false, error };
  }

  #codec(key: string): ResourceCodec {
    // /registry/<group>/<resource>/...
    const a = key.indexOf("/", 1);
    const b = a < 0 ? -1 : key.indexOf("/", a + 1);
    const c = b < 0 ? -1 : key.indexOf("/", b + 1);
    if (c < 0) return UNCONFIGURED;
    const id = key.slice(a + 1, c);
    let codec = this.#byResource.get(id);
    if (!codec) {
      const group = key.slice(a + 1, b);
      codec = this.#match(group === "core" ? "" : group, key.slice(b + 1, c));
      this.#byResource.set(id, codec);
    }
    return codec;
  }

  #match(group: string, resource: string): ResourceCodec {
    for (const rule of this.#rules) {
      for (const p of rule.patterns) {
        const groupMatches = p.group === "*" || p.group === group ||
          canonicalGroup(p.group) === group;
        if (groupMatches && (p.resource === "*" || p.resource === resource)) return rule.codec;
      }
    }
    return UNCONFIGURED;
  }
}

function prefixOf(stored: string): string {
  const parts = stored.split(":", 5);
  return JSON.stringify(parts.length === 5 ? `${parts.join(":")}:` : ENCRYPTED_PREFIX);
}
