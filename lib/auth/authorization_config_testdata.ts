/**
 * Test fixtures for the authorization configuration's tests: a valid webhook entry and file,
 * loading a file (with its kubeconfig) from a temporary directory, the lines of the ConfigError
 * it throws, and a CA on disk.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { ConfigError } from "../config/mod.ts";
import { ensurePki } from "../certificates/pki.ts";
import {
  type AuthorizationConfig,
  loadAuthorizationConfig,
  type LoadAuthorizationConfigOptions,
} from "./authorization_config.ts";

export const KUBECONFIG = {
  apiVersion: "v1",
  kind: "Config",
  clusters: [{ name: "authz", cluster: { server: "https://127.0.0.1:9443/authorize" } }],
  users: [{ name: "apiserver", user: { token: "s3cret" } }],
  contexts: [{ name: "webhook", context: { cluster: "authz", user: "apiserver" } }],
  "current-context": "webhook",
};

export type Doc = Record<string, unknown>;

/** A valid webhook entry; `patch` replaces webhook fields (undefined deletes one). */
export function webhook(name = "guard", patch: Doc = {}): Doc {
  const fields: Doc = {
    timeout: "3s",
    authorizedTTL: "5m",
    unauthorizedTTL: "30s",
    subjectAccessReviewVersion: "v1",
    matchConditionSubjectAccessReviewVersion: "v1",
    failurePolicy: "Deny",
    connectionInfo: { type: "KubeConfigFile", kubeConfigFile: "webhook.kubeconfig" },
    matchConditions: [{ expression: "request.user != 'system:anonymous'" }],
    ...patch,
  };
  for (const [k, v] of Object.entries(fields)) if (v === undefined) delete fields[k];
  return { type: "Webhook", name, webhook: fields };
}

export function config(authorizers: unknown, top: Doc = {}): Doc {
  return {
    apiVersion: "apiserver.platform.io/v1beta1",
    kind: "AuthorizationConfiguration",
    authorizers,
    ...top,
  };
}

/** Writes `authz.yaml` (a document or raw text) and a kubeconfig beside it in a temp dir. */
export async function setup(content: Doc | string, kubeconfig: Doc | string = KUBECONFIG) {
  const dir = await Deno.makeTempDir({ prefix: "authz-config-test-" });
  await Deno.writeTextFile(
    join(dir, "authz.yaml"),
    typeof content === "string" ? content : stringify(content),
  );
  await Deno.writeTextFile(
    join(dir, "webhook.kubeconfig"),
    typeof kubeconfig === "string" ? kubeconfig : stringify(kubeconfig),
  );
  return {
    dir,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

export async function load(
  content: Doc | string,
  opts: { kubeconfig?: Doc | string } & LoadAuthorizationConfigOptions = {},
): Promise<AuthorizationConfig> {
  await using tmp = await setup(content, opts.kubeconfig);
  return await loadAuthorizationConfig("authz.yaml", { cwd: tmp.dir, ...opts });
}

/** Every line of the ConfigError that loading throws. */
export async function errors(
  content: Doc | string,
  opts: { kubeconfig?: Doc | string } & LoadAuthorizationConfigOptions = {},
): Promise<string[]> {
  try {
    await load(content, opts);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    return err.message.split("\n");
  }
  throw new Error("expected loading to fail");
}

export async function fails(content: Doc | string, ...expected: string[]) {
  assert.deepStrictEqual(await errors(content), expected);
}

export async function makeCa(dir: string): Promise<string> {
  const pki = await ensurePki({
    dataDir: join(dir, "data"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  return pki.caCertPem;
}
