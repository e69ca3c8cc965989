/**
 * The admin kubeconfig: {@link writeKubeconfig} writes one cluster, one user (bearer token)
 * and one current context into a kubeconfig file, keeping every other entry the file holds.
 *
 * @module
 */

import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { ADMIN_USER } from "../api/mod.ts";
import { writeFileAtomic } from "../storage/mod.ts";

/** Options of {@link writeKubeconfig}. */
export interface KubeconfigOptions {
  path: string;
  /** e.g. `https://127.0.0.1:6443`. */
  server: string;
  /** Embedded as certificate-authority-data; omitted when undefined (system roots). */
  caCertPem: string | undefined;
  token: string;
  /** @default "platform-admin" */
  user?: string;
  /** @default "platform" */
  clusterName?: string;
  /** @default "platform" */
  contextName?: string;
}

/**
 * Write a kubeconfig with one cluster, one user (bearer token) and one current context,
 * atomically and with mode 0600.
 */
export async function writeKubeconfig(opts: KubeconfigOptions): Promise<void> {
  const user = opts.user ?? ADMIN_USER;
  const clusterName = opts.clusterName ?? "platform";
  const contextName = opts.contextName ?? "platform";
  const cluster: Record<string, string> = { server: opts.server };
  if (opts.caCertPem !== undefined) {
    cluster["certificate-authority-data"] = btoa(opts.caCertPem);
  }
  // The entries this writes replace their namesakes; every other cluster, user and context
  // the file holds (a user's client-certificate or OIDC context) stays, and so does a
  // current-context that still names one.
  const doc = await readKubeconfig(opts.path);
  const put = (list: string, entry: { name: string; [field: string]: unknown }) => {
    const items = (Array.isArray(doc[list]) ? doc[list] : []) as { name?: unknown }[];
    doc[list] = [...items.filter((e) => e?.name !== entry.name), entry];
  };
  put("clusters", { name: clusterName, cluster });
  put("users", { name: user, user: { token: opts.token } });
  put("contexts", { name: contextName, context: { cluster: clusterName, user } });
  const contexts = doc.contexts as { name?: unknown }[];
  if (!contexts.some((c) => c?.name === doc["current-context"])) {
    doc["current-context"] = contextName;
  }
  await writeFileAtomic(opts.path, stringifyYaml(doc), { mode: 0o600 });
}

/** The kubeconfig at `path` as a mapping: a new one when it is missing or not a mapping. */
async function readKubeconfig(path: string): Promise<Record<string, unknown>> {
  const fresh = { apiVersion: "v1", kind: "Config", preferences: {} };
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return fresh;
  }
  try {
    const doc = parseYaml(text);
    return doc && typeof doc === "object" && !Array.isArray(doc) ? doc : fresh;
  } catch {
    return fresh;
  }
}
