/**
 * The ciphers of the encryption providers, one per configured key. Every stored value names
 * its provider and key in kube's prefix, `k8s:enc:<provider>:v1:<key name>:`, followed here by
 * the base64 of the provider's bytes (our values are text; kube stores the raw bytes):
 *
 * - `aesgcm`: 12-byte random nonce | ciphertext | 16-byte tag; the storage key is the
 *   additional authenticated data, so a value copied under another key does not decrypt.
 * - `aescbc`: 16-byte random IV | ciphertext (PKCS#7 padding).
 * - `secretbox`: 24-byte random nonce | XSalsa20-Poly1305 box.
 *
 * Synchronous (node:crypto and tweetnacl): values are encrypted on the write path, in order.
 * @module
 */

import { Buffer } from "node:buffer";
import { type CipherGCMTypes, createCipheriv, createDecipheriv, randomFillSync } from "node:crypto";
import nacl from "tweetnacl";

/** The providers that encrypt. */
export type CipherProvider = "aescbc" | "aesgcm" | "secretbox";

/** Kube's prefix of every encrypted value. */
export const ENCRYPTED_PREFIX = "k8s:enc:";

/** One provider key: encrypts new values and decrypts the values stored with it. */
export interface KeyCipher {
  /** `k8s:enc:<provider>:v1:<key name>:` */
  readonly prefix: string;
  /** The stored form of `plain` under the storage key `storageKey`. */
  encrypt(storageKey: string, plain: string): string;
  /** The plain value of a stored form that starts with {@link prefix}; undefined if it does not
   * decrypt (wrong key, damaged or moved value). */
  decrypt(storageKey: string, stored: string): string | undefined;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The cipher of one key of a provider. `secret` must have the provider's size. */
export function keyCipher(provider: CipherProvider, name: string, secret: Uint8Array): KeyCipher {
  const prefix = `${ENCRYPTED_PREFIX}${provider}:v1:${name}:`;
  const key = Buffer.from(secret);
  const seal = provider === "aesgcm"
    ? aesGcm(key)
    : provider === "aescbc"
    ? aesCbc(key)
    : secretBox(new Uint8Array(secret));
  return {
    prefix,
    encrypt(storageKey, plain) {
      return prefix + seal.encrypt(storageKey, plain);
    },
    decrypt(storageKey, stored) {
      try {
        const bytes = Buffer.from(stored.slice(prefix.length), "base64");
        const plain = seal.decrypt(storageKey, bytes);
        // Fatal: aescbc is not authenticated, and garbage from a changed key must not pass.
        return plain === undefined ? undefined : utf8.decode(plain);
      } catch {
        return undefined;
      }
    },
  };
}

/** One provider's cipher: the base64 of its bytes for a plain value, and back. */
interface Seal {
  encrypt(storageKey: string, plain: string): string;
  decrypt(storageKey: string, data: Buffer): Buffer | undefined;
}

// Buffers and strings straight into node:crypto, and the base64 of the nonce (a multiple of 3
// bytes, so without padding) joined to that of the rest: each copy or conversion saved shows on
// the write path.

function aesGcm(key: Buffer): Seal {
  const algorithm = `aes-${key.length * 8}-gcm` as CipherGCMTypes;
  return {
    encrypt(storageKey, plain) {
      const nonce = randomFillSync(Buffer.allocUnsafe(12));
      const c = createCipheriv(algorithm, key, nonce);
      c.setAAD(Buffer.from(storageKey, "utf8"));
      const body = c.update(plain, "utf8");
      const last = c.final();
      const rest = last.length === 0
        ? Buffer.concat([body, c.getAuthTag()])
        : Buffer.concat([body, last, c.getAuthTag()]);
      return nonce.toString("base64") + rest.toString("base64");
    },
    decrypt(storageKey, data) {
      if (data.length < 12 + 16) return undefined;
      const d = createDecipheriv(algorithm, key, data.subarray(0, 12));
      d.setAAD(Buffer.from(storageKey, "utf8"));
      d.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]);
    },
  };
}

function aesCbc(key: Buffer): Seal {
  const algorithm = `aes-${key.length * 8}-cbc`;
  return {
    encrypt(_storageKey, plain) {
      const iv = randomFillSync(Buffer.allocUnsafe(16));
      const c = createCipheriv(algorithm, key, iv);
      return Buffer.concat([iv, c.update(plain, "utf8"), c.final()]).toString("base64");
    },
    decrypt(_storageKey, data) {
      if (data.length < 32 || data.length % 16 !== 0) return undefined;
      const d = createDecipheriv(algorithm, key, data.subarray(0, 16));
      return Buffer.concat([d.update(data.subarray(16)), d.final()]);
    },
  };
}

function secretBox(key: Uint8Array): Seal {
  return {
    encrypt(_storageKey, plain) {
      const nonce = randomFillSync(Buffer.allocUnsafe(nacl.secretbox.nonceLength));
      const box = nacl.secretbox(Buffer.from(plain, "utf8"), nonce, key);
      return nonce.toString("base64") + Buffer.from(box.buffer, box.byteOffset, box.length)
        .toString("base64");
    },
    decrypt(_storageKey, data) {
      const n = nacl.secretbox.nonceLength;
      if (data.length < n + nacl.secretbox.overheadLength) return undefined;
      const plain = nacl.secretbox.open(data.subarray(n), data.subarray(0, n), key);
      return plain ? Buffer.from(plain.buffer, plain.byteOffset, plain.length) : undefined;
    },
  };
}
