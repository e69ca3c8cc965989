/**
 * Encryption-at-rest figures for `deno task bench` (see bench/README.md): creates/s and gets/s
 * of Secrets, 32 clients, on a server whose `--encryption-provider-config` encrypts Secrets
 * with `aesgcm`, against the same on a server without one (`identity`: stored as they are).
 * Both servers run on the file store at the same time; the figures are medians of rounds that
 * alternate between them.
 */

import { EncryptionTransformer, parseEncryptionConfig } from "../lib/encryption/mod.ts";
import type { AuthOptions } from "./auth.ts";
import type { Api } from "./harness.ts";
import type { WrkRequest } from "./wrk.ts";

/** Servers with extra flags and a load client, as bench/auth.ts takes them. */
export type EncryptionOptions = AuthOptions;

export interface EncryptionFigures {
  /** Secret creates/s, 32 clients: aesgcm, identity (medians of alternating rounds). */
  createsAesgcm: number;
  createsIdentity: number;
  /** Secret gets/s, 32 clients, cycling over {@link SECRETS} secrets. */
  getsAesgcm: number;
  getsIdentity: number;
  /** In process, µs per aesgcm encryption and decryption of one such Secret's stored value. */
  encryptMicros: number;
  decryptMicros: number;
  problems: string[];
}

const CONNECTIONS = 32;
const ROUNDS = 5;
const SECRETS = 500;
const COLLECTION = "/api/v1/namespaces/default/secrets";

export async function encryptionFigures(o: EncryptionOptions): Promise<EncryptionFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  const configText = [
    "apiVersion: apiserver.config.k8s.io/v1",
    "kind: EncryptionConfiguration",
    "resources:",
    "  - resources: [secrets]",
    "    providers:",
    `      - aesgcm: {keys: [{name: bench, secret: ${key}}]}`,
    "      - identity: {}",
    "",
  ].join("\n");
  await Deno.writeTextFile(`${o.dir}/encryption.yaml`, configText);
  const aesgcm = await o.start(`${o.dir}/aesgcm`, [
    "--encryption-provider-config",
    `${o.dir}/encryption.yaml`,
  ]);
  const identity = await o.start(`${o.dir}/identity`, []);
  try {
    // Secrets of some 200 bytes, like a small credential.
    const data = { username: btoa("bench-user"), password: btoa("p".repeat(120)) };
    const create = {
      method: "POST" as const,
      paths: [COLLECTION],
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: { generateName: "bench-" }, type: "Opaque", data }),
      expected: 201,
    };
    const paths: string[] = [];
    for (let i = 0; i < SECRETS; i++) paths.push(`${COLLECTION}/read-${i}`);
    for (const s of [aesgcm, identity]) {
      for (let i = 0; i < SECRETS; i++) {
        await admin(s.api, "POST", COLLECTION, { metadata: { name: `read-${i}` }, data });
      }
    }
    const get = { method: "GET" as const, paths, headers: {}, expected: 200 };
    const run = async (label: string, api: Api, req: WrkRequest & { expected: number }) => {
      const r = await o.measure(api, CONNECTIONS, o.ms, req);
      o.note(`${label}: ${Math.round(r.perSec)}/s`);
      if (r.errors) problems.push(`${label}: ${r.errors} errors, first: ${r.firstError}`);
      return r.perSec;
    };
    // Rounds alternate which server goes first, and pause after each measurement: a burst of
    // creates leaves object files to write in the background, which would otherwise slow down
    // whatever is measured next on the other server (both share the CPUs).
    const alternate = async (
      label: string,
      req: WrkRequest & { expected: number },
      pauseMs: number,
    ): Promise<{ aesgcm: number; identity: number }> => {
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const order = i % 2 === 0 ? ["aesgcm", "identity"] : ["identity", "aesgcm"];
        for (const which of order) {
          const api = which === "aesgcm" ? aesgcm.api : identity.api;
          (which === "aesgcm" ? a : b).push(await run(`${label}, ${which}`, api, req));
          await new Promise((r) => setTimeout(r, pauseMs));
        }
      }
      return { aesgcm: median(a), identity: median(b) };
    };
    await new Promise((r) => setTimeout(r, 2_000));
    const gets = await alternate("Secret gets", get, 300);
    const creates = await alternate("Secret creates", create, 2_000);
    return {
      ...cipherMicros(configText, data),
      createsAesgcm: creates.aesgcm,
      createsIdentity: creates.identity,
      getsAesgcm: gets.aesgcm,
      getsIdentity: gets.identity,
      problems,
    };
  } finally {
    await aesgcm.stop();
    await identity.stop();
  }
}

/** µs per encryption and decryption of a stored Secret like the bench's, in process. */
function cipherMicros(
  configText: string,
  data: Record<string, string>,
): { encryptMicros: number; decryptMicros: number } {
  const t = new EncryptionTransformer(parseEncryptionConfig(configText, "encryption.yaml"));
  const key = "/registry/core/secrets/default/bench-x7k2p";
  const value = JSON.stringify({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: "bench-x7k2p",
      namespace: "default",
      uid: crypto.randomUUID(),
      creationTimestamp: new Date().toISOString(),
    },
    type: "Opaque",
    data,
  });
  const time = (n: number, fn: () => unknown) => {
    for (let i = 0; i < 1000; i++) fn();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    return ((performance.now() - t0) / n) * 1000;
  };
  const stored = t.toStorage(key, value);
  return {
    encryptMicros: time(20_000, () => t.toStorage(key, value)),
    decryptMicros: time(20_000, () => t.fromStorage(key, stored)),
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function admin(api: Api, method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(api.url + path, {
    method,
    client: api.client,
    headers: { ...api.headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}
