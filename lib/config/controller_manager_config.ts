/**
 * `--controller-manager-config`: the parts of a KubeControllerManagerConfiguration that apply
 * to this server, read as a third layer of settings under the flags and the `--config` file.
 * The file is checked whole (kube's validation, `kinds/controller_manager.ts`); then only
 * what it sets applies, kube's defaults do not:
 *
 * - `generic.controllers` → `controllers`: kube's names and aliases map to the server's
 *   (`certificatesigningrequest-signing-controller` and `csrsigning` are `csrsigning`);
 *   entries naming kube controllers this server does not have are left out;
 * - `generic.leaderElection` → `leaderElect`, `leaderElectLeaseDuration`, …;
 * - `csrSigningController.clusterSigningDuration` → `clusterSigningDuration`.
 *
 * @module
 */

import { isDNS1123Label, isDNS1123Subdomain } from "../api/mod.ts";
import { ConfigError, osReason, quote } from "./config_error.ts";
import type { Layer, Settings } from "./config_layers.ts";
import type { Field } from "./config_file_schema.ts";
import { describeValue } from "./schema_issues.ts";
import { parseYamlConfig } from "./yaml_file.ts";
import { type Obj, parseGoDuration } from "./kinds/common.ts";
import {
  KUBE_CONTROLLER_MANAGER_API_VERSIONS,
  KUBE_CONTROLLER_MANAGER_KIND,
  kubeControllerManagerKind,
  serverControllerName,
} from "./kinds/controller_manager.ts";

/** Where each server setting is in the file, for messages. */
const FILE_PATHS: Partial<Record<Field, string>> = {
  controllers: "generic.controllers",
  leaderElect: "generic.leaderElection.leaderElect",
  leaderElectLeaseDuration: "generic.leaderElection.leaseDuration",
  leaderElectRenewDeadline: "generic.leaderElection.renewDeadline",
  leaderElectRetryPeriod: "generic.leaderElection.retryPeriod",
  leaderElectResourceName: "generic.leaderElection.resourceName",
  leaderElectResourceNamespace: "generic.leaderElection.resourceNamespace",
  clusterSigningDuration: "csrSigningController.clusterSigningDuration",
};

/**
 * Read and check the file at `path` (`shownPath` as the user wrote it), and return the
 * settings it sets as a layer.
 *
 * @throws {ConfigError} `<file>: <field path>: <kube's message>` for the first problem.
 */
export async function controllerManagerLayer(path: string, shownPath: string): Promise<Layer> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new ConfigError(
      `--controller-manager-config: cannot read ${quote(shownPath)}: ${osReason(err)}`,
    );
  }
  const doc = parseYamlConfig(text, shownPath);
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw new ConfigError(`${shownPath}: expected a mapping, got ${describeValue(doc ?? null)}`);
  }
  const data = doc as Obj;
  if (data.kind !== KUBE_CONTROLLER_MANAGER_KIND) {
    throw new ConfigError(
      `${shownPath}: kind: Unsupported value: ${quote(data.kind ?? "")}: supported values: ` +
        JSON.stringify(KUBE_CONTROLLER_MANAGER_KIND),
    );
  }
  if (!KUBE_CONTROLLER_MANAGER_API_VERSIONS.includes(data.apiVersion as never)) {
    throw new ConfigError(
      `${shownPath}: apiVersion: Unsupported value: ${quote(data.apiVersion ?? "")}: supported ` +
        `values: ${KUBE_CONTROLLER_MANAGER_API_VERSIONS.map((v) => JSON.stringify(v)).join(", ")}`,
    );
  }
  const { errors } = kubeControllerManagerKind.check(data);
  if (errors.length > 0) throw new ConfigError(`${shownPath}: ${errors[0]}`);
  const values = settingsOf(data);
  // The Lease's name and namespace must be names the API accepts, as for the flags.
  for (
    const [field, problems] of [
      ["leaderElectResourceName", isDNS1123Subdomain],
      ["leaderElectResourceNamespace", isDNS1123Label],
    ] as const
  ) {
    const name = values[field];
    const [problem] = name === undefined ? [] : problems(name);
    if (problem !== undefined) {
      throw new ConfigError(`${shownPath}: ${FILE_PATHS[field]}: ${quote(name)}: ${problem}`);
    }
  }
  return {
    values,
    shown: {},
    where: (field) => `${shownPath}: ${FILE_PATHS[field] ?? field}`,
  };
}

/** The server settings a checked file sets. */
function settingsOf(data: Obj): Partial<Settings> {
  const values: Partial<Settings> = {};
  const generic = (data.generic ?? {}) as Obj;
  const controllers = generic.controllers as string[] | undefined;
  if (controllers && controllers.length > 0) {
    values.controllers = controllers.flatMap((entry) => {
      if (entry === "*") return [entry];
      const off = entry.startsWith("-");
      const name = serverControllerName(entry.replace(/^-/, ""));
      return name === undefined ? [] : [off ? `-${name}` : name];
    });
  }
  const le = (generic.leaderElection ?? {}) as Obj;
  if (typeof le.leaderElect === "boolean") values.leaderElect = le.leaderElect;
  const duration = (text: unknown) => {
    const ms = parseGoDuration(String(text)) ?? 0;
    return ms > 0 ? ms : undefined;
  };
  const lease = duration(le.leaseDuration);
  if (lease !== undefined) values.leaderElectLeaseDuration = lease;
  const renew = duration(le.renewDeadline);
  if (renew !== undefined) values.leaderElectRenewDeadline = renew;
  const retry = duration(le.retryPeriod);
  if (retry !== undefined) values.leaderElectRetryPeriod = retry;
  if (le.resourceName) values.leaderElectResourceName = le.resourceName as string;
  if (le.resourceNamespace) values.leaderElectResourceNamespace = le.resourceNamespace as string;
  const signing = duration((data.csrSigningController as Obj | undefined)?.clusterSigningDuration);
  if (signing !== undefined) values.clusterSigningDuration = signing;
  return values;
}
