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
  /** The stored form of `plain` under the storage key `key`. */
  encrypt(key: string, plain: string): string;
  /** The plain value of a stored form that starts with {@link prefix}; undefined if it does not
   * decrypt (wrong key, damaged or moved value). */
  decrypt(key: string, stored: string): string | undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The cipher of one key of a provider. `secret` must have the provider's size. */
export function keyCipher(provider: CipherProvider, name: string, secret: Uint8Array): KeyCipher {
  const prefix = `${ENCRYPTED_PREFIX}${provider}:v1:${name}:`;
  const seal = provider === "aesgcm"
    ? aesGcm(secret)
    : provider === "aescbc"
    ? aesCbc(secret)
    : secretBox(secret);
  return {
    prefix,
    encrypt(key, plain) {
      return prefix + Buffer.from(seal.encrypt(key, encoder.encode(plain))).toString("base64");
    },
    decrypt(key, stored) {
      try {
        const bytes = Buffer.from(stored.slice(prefix.length), "base64");
        const plain = seal.decrypt(key, bytes);
        return plain === undefined ? undefined : decoder.decode(plain);
      } catch {
        return undefined;
      }
    },
  };
}

interface Seal {
  encrypt(key: string, plain: Uint8Array): Uint8Array;
  decrypt(key: string, data: Uint8Array): Uint8Array | undefined;
}

function random(n: number): Uint8Array {
  return randomFillSync(new Uint8Array(n));
}

function concat(parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

function aesGcm(secret: Uint8Array): Seal {
  const algorithm = `aes-${secret.length * 8}-gcm` as CipherGCMTypes;
  return {
    encrypt(key, plain) {
      const nonce = random(12);
      const c = createCipheriv(algorithm, secret, nonce);
      c.setAAD(encoder.encode(key));
      const body = c.update(plain);
      const last = c.final();
      return concat([nonce, body, last, c.getAuthTag()]);
    },
    decrypt(key, data) {
      if (data.length < 12 + 16) return undefined;
      const d = createDecipheriv(algorithm, secret, data.subarray(0, 12));
      d.setAAD(encoder.encode(key));
      d.setAuthTag(data.subarray(data.length - 16));
      return concat([d.update(data.subarray(12, data.length - 16)), d.final()]);
    },
  };
}

function aesCbc(secret: Uint8Array): Seal {
  const algorithm = `aes-${secret.length * 8}-cbc`;
  return {
    encrypt(_key, plain) {
      const iv = random(16);
      const c = createCipheriv(algorithm, secret, iv);
      return concat([iv, c.update(plain), c.final()]);
    },
    decrypt(_key, data) {
      if (data.length < 32 || data.length % 16 !== 0) return undefined;
      const d = createDecipheriv(algorithm, secret, data.subarray(0, 16));
      return concat([d.update(data.subarray(16)), d.final()]);
    },
  };
}

function secretBox(secret: Uint8Array): Seal {
  return {
    encrypt(_key, plain) {
      const nonce = random(nacl.secretbox.nonceLength);
      return concat([nonce, nacl.secretbox(plain, nonce, secret)]);
    },
    decrypt(_key, data) {
      const n = nacl.secretbox.nonceLength;
      if (data.length < n + nacl.secretbox.overheadLength) return undefined;
      return nacl.secretbox.open(data.subarray(n), data.subarray(0, n), secret) ?? undefined;
    },
  };
}
