/**
 * Start-up step 2b, replicas on etcd only: the secrets every replica must share (the cluster
 * CA, the service-account signing key, the admin token, the continue-token key) are made once
 * and kept in etcd, sealed with a key derived from the `--token` passphrase the replicas are
 * given (as k3s does). The first replica to start with the token writes its own (a single node
 * moved to etcd keeps its CA); every later one writes the cluster's into its data directory
 * before the certificates are read. Each replica still makes its own serving certificate,
 * signed by the shared CA, for its own names.
 *
 * The record (JSON at `<prefix>/platform/bootstrap`): `format`, the PBKDF2-SHA-256 salt and
 * iteration count, the AES-256-GCM nonce, and the sealed `{ files: { "pki/ca.crt": … } }`.
 */

import { join } from "node:path";
import type { Logger } from "../../api/mod.ts";
import { ServiceAccountTokens } from "../../auth/mod.ts";
import { ensureAdminToken, ensureContinueKey, ensurePki } from "../../certificates/mod.ts";
import { ConfigError } from "../../config/mod.ts";
import {
  etcdKeyPrefix,
  type EtcdRoute,
  EtcdUnavailableError,
  openSharedRecord,
  writeFileAtomic,
} from "../../storage/mod.ts";
import { silentLogger } from "../../api/mod.ts";
import { pkiOptionsOf } from "./credentials.ts";
import type { StartOptions } from "./options.ts";

/** The files under the data directory that are the same on every replica. */
export const SHARED_FILES = [
  "pki/ca.crt",
  "pki/ca.key",
  "pki/service-account.key",
  "pki/admin.token",
  "pki/continue.key",
] as const;

const FORMAT = "platform-bootstrap/v1";
const ITERATIONS = 210_000;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** Where the sealed record lives for `--etcd-prefix`. */
export function bootstrapKey(etcdPrefix: string): string {
  return `${etcdKeyPrefix(etcdPrefix)}/platform/bootstrap`;
}

/**
 * With `--storage etcd3` and a token: makes the data directory hold the cluster's shared
 * secrets (writing this server's as the cluster's when it is the first). Nothing otherwise.
 *
 * @throws {ConfigError} for a wrong token, or a data directory of another cluster.
 * @throws {EtcdUnavailableError} when etcd does not answer.
 */
export async function joinSharedState(
  opts: StartOptions,
  dataDir: string,
  hostname: string,
  tls: { ca?: Uint8Array; cert?: Uint8Array; key?: Uint8Array },
  logger: Logger,
  route?: EtcdRoute,
): Promise<void> {
  const token = opts.token;
  if (token === undefined || opts.storage !== "etcd3") return;
  const key = bootstrapKey(opts.etcdPrefix ?? "/registry");
  const record = await openSharedRecord({ endpoints: opts.etcdServers ?? [], tls, key, route })
    .catch((err) => {
      if (err instanceof EtcdUnavailableError) {
        throw new EtcdUnavailableError(`--etcd-servers: ${err.message}`);
      }
      throw err;
    });
  try {
    const before = await readShared(dataDir);
    let sealed = await record.get();
    if (sealed === undefined) {
      await makeMissing(opts, dataDir, hostname);
      const mine = await readShared(dataDir);
      if (await record.createIfAbsent(await seal(token, mine))) {
        logger.info(
          `bootstrap: this server's CA, service-account key and admin token are now the ` +
            `cluster's (sealed with --token in etcd at ${key})`,
        );
        return;
      }
      sealed = await record.get(); // another replica was first
    }
    const theirs = await unseal(token, sealed!, key);
    let written = 0;
    for (const path of SHARED_FILES) {
      const content = theirs[path];
      if (content === undefined) throw new ConfigError(`${key}: the record has no ${path}`);
      const local = await readText(join(dataDir, path));
      if (local === content) continue;
      if (before[path] !== undefined) {
        throw new ConfigError(
          `--data-dir: ${path} in ${dataDir} is not the cluster's (the one in etcd at ${key}): ` +
            `this data directory belongs to another cluster; move it away to join`,
        );
      }
      await Deno.mkdir(join(dataDir, "pki"), { recursive: true, mode: 0o700 });
      await writeFileAtomic(join(dataDir, path), content, { mode: 0o600 });
      written++;
    }
    if (written > 0) logger.info(`bootstrap: joined the cluster: shared secrets read from etcd`);
  } finally {
    record.close();
  }
}

/** Makes whatever shared secret the data directory lacks, as a lone server would. */
async function makeMissing(opts: StartOptions, dataDir: string, hostname: string) {
  await ensurePki({ ...pkiOptionsOf(opts, dataDir, hostname), logger: silentLogger });
  await ensureAdminToken(dataDir);
  await ensureContinueKey(dataDir);
  await ServiceAccountTokens.open(dataDir);
}

async function readShared(dataDir: string): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const path of SHARED_FILES) out[path] = await readText(join(dataDir, path));
  return out;
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

async function deriveKey(token: string, salt: Uint8Array, iterations: number) {
  const material = await crypto.subtle.importKey("raw", enc.encode(token), "PBKDF2", false, [
    "deriveKey",
  ]);
  return crypto.subtle.deriveKey(
    { name: "PBKDF2", hash: "SHA-256", salt: salt as BufferSource, iterations },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** Seals `files` with `token`: the record's bytes. */
export async function seal(
  token: string,
  files: Record<string, string | undefined>,
): Promise<Uint8Array> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await deriveKey(token, salt, ITERATIONS);
  const plain = enc.encode(JSON.stringify({ files }));
  const data = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, plain));
  return enc.encode(JSON.stringify({
    format: FORMAT,
    kdf: { name: "PBKDF2", hash: "SHA-256", iterations: ITERATIONS, salt: b64(salt) },
    cipher: { name: "AES-GCM", iv: b64(iv) },
    data: b64(data),
  }));
}

/** Opens a record sealed with `token`; a ConfigError for another token or another format. */
export async function unseal(
  token: string,
  record: Uint8Array,
  where: string,
): Promise<Record<string, string>> {
  let parsed: {
    format?: string;
    kdf?: { iterations?: number; salt?: string };
    cipher?: { iv?: string };
    data?: string;
  };
  try {
    parsed = JSON.parse(dec.decode(record));
  } catch {
    parsed = {};
  }
  const { kdf, cipher, data } = parsed;
  if (
    parsed.format !== FORMAT || typeof kdf?.salt !== "string" ||
    !Number.isInteger(kdf.iterations) ||
    typeof cipher?.iv !== "string" || typeof data !== "string"
  ) {
    throw new ConfigError(`${where}: not a ${FORMAT} record; another program wrote this key`);
  }
  const key = await deriveKey(token, unb64(kdf.salt), kdf.iterations!);
  let plain: ArrayBuffer;
  try {
    plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: unb64(cipher.iv) as BufferSource },
      key,
      unb64(data) as BufferSource,
    );
  } catch {
    throw new ConfigError(
      `--token: not the token this cluster was started with (it cannot open ${where})`,
    );
  }
  return (JSON.parse(dec.decode(plain)) as { files: Record<string, string> }).files;
}

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unb64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
