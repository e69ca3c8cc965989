/**
 * A user's `exec` block: the credential plugin to run and how (kube's `ExecConfig`).
 *
 * @module
 */

import { isObj, KubeconfigError, quote, stringField } from "./parse.ts";

/** The ExecCredential versions a plugin may speak: ours, and kube's spelling of them. */
export const EXEC_API_VERSIONS: readonly string[] = [
  "client.authentication.platform.io/v1",
  "client.authentication.platform.io/v1beta1",
  "client.authentication.k8s.io/v1",
  "client.authentication.k8s.io/v1beta1",
];

/** When the plugin gets the terminal's stdin. */
export type InteractiveMode = "Never" | "IfAvailable" | "Always";

/** A credential plugin. */
export interface ExecConfig {
  /** The program; a path with a `/` resolves against the configuration file's directory. */
  command: string;
  args: string[];
  /** Added to the client's environment. */
  env: { name: string; value: string }[];
  /** The ExecCredential version sent and expected back. */
  apiVersion: string;
  /** Shown when the program is not found. */
  installHint?: string;
  /** Whether `spec.cluster` is filled in. */
  provideClusterInfo: boolean;
  interactiveMode: InteractiveMode;
}

const MODES: readonly InteractiveMode[] = ["Never", "IfAvailable", "Always"];

/**
 * Reads an `exec` block.
 *
 * @throws {KubeconfigError} naming the field: `users[0].user.exec.apiVersion: "x" is not one
 * of ...`, `...exec.interactiveMode: required for client.authentication.k8s.io/v1`.
 */
export function parseExecConfig(raw: unknown, at: string): ExecConfig {
  if (!isObj(raw)) fail(`${at}: expected a mapping`);
  const command = stringField(raw, "command", `${at}.command`);
  if (!command) fail(`${at}.command: required field is missing`);
  const apiVersion = stringField(raw, "apiVersion", `${at}.apiVersion`);
  if (!apiVersion) fail(`${at}.apiVersion: required field is missing`);
  if (!EXEC_API_VERSIONS.includes(apiVersion)) {
    fail(`${at}.apiVersion: ${quote(apiVersion)} is not one of ${EXEC_API_VERSIONS.join(", ")}`);
  }
  const args = raw.args ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) {
    fail(`${at}.args: expected a list of strings`);
  }
  const envRaw = raw.env ?? [];
  if (!Array.isArray(envRaw)) fail(`${at}.env: expected a list`);
  const env = envRaw.map((e, i) => {
    if (!isObj(e)) fail(`${at}.env[${i}]: expected a mapping`);
    const name = stringField(e, "name", `${at}.env[${i}].name`);
    if (!name) fail(`${at}.env[${i}].name: required field is missing`);
    return { name, value: stringField(e, "value", `${at}.env[${i}].value`) ?? "" };
  });
  const mode = stringField(raw, "interactiveMode", `${at}.interactiveMode`);
  if (mode !== undefined && !MODES.includes(mode as InteractiveMode)) {
    fail(`${at}.interactiveMode: ${quote(mode)} is not one of ${MODES.join(", ")}`);
  }
  if (mode === undefined && apiVersion.endsWith("/v1")) {
    fail(`${at}.interactiveMode: required for ${apiVersion}`);
  }
  const provide = raw.provideClusterInfo ?? false;
  if (typeof provide !== "boolean") fail(`${at}.provideClusterInfo: expected true or false`);
  return {
    command,
    args: args as string[],
    env,
    apiVersion,
    installHint: stringField(raw, "installHint", `${at}.installHint`),
    provideClusterInfo: provide,
    interactiveMode: (mode as InteractiveMode | undefined) ?? "IfAvailable",
  };
}

function fail(message: string): never {
  throw new KubeconfigError(message);
}
