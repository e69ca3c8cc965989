/**
 * The configuration kinds of `lib/config/kinds/` by apiVersion and kind, and the check of one
 * document against the kind it names: {@link checkKindDocument}. The server's own kinds
 * (ServerConfiguration, AuthenticationConfiguration, …) have their loaders elsewhere; the
 * `platform check-config` command dispatches to those itself.
 *
 * @module
 */

import { type ConfigKind, FieldErrors, type KindCheck, type Obj } from "./common.ts";
import { cloudControllerManagerKind, kubeControllerManagerKind } from "./controller_manager.ts";
import { leaderMigrationKind } from "./leader_migration.ts";
import { proxyKind } from "./proxy.ts";
import { schedulerKind } from "./scheduler.ts";
import { pluginArgsKinds } from "./scheduler_plugin_args.ts";

/** Every kind `lib/config/kinds/` checks. */
export const CONFIG_KINDS: readonly ConfigKind[] = [
  kubeControllerManagerKind,
  cloudControllerManagerKind,
  leaderMigrationKind,
  schedulerKind,
  ...pluginArgsKinds,
  proxyKind,
];

/** The kind of this module named `kind`, whatever its apiVersion. */
export function findConfigKind(kind: unknown): ConfigKind | undefined {
  return CONFIG_KINDS.find((k) => k.kind === kind);
}

/**
 * Check one document of a kind of this module: its apiVersion must be one the kind is read
 * under, then the kind's own check runs.
 *
 * @example
 * ```ts
 * checkKindDocument({ apiVersion: "kubescheduler.config.k8s.io/v1", kind: "KubeSchedulerConfiguration", parallelism: 0 });
 * // { errors: ["parallelism: Invalid value: 0: should be an integer value greater than zero"], … }
 * ```
 */
export function checkKindDocument(doc: Obj): KindCheck {
  const spec = findConfigKind(doc.kind);
  const errs = new FieldErrors();
  if (spec === undefined) {
    errs.notSupported("kind", doc.kind, CONFIG_KINDS.map((k) => k.kind));
    return { errors: errs.messages() };
  }
  if (!spec.apiVersions.includes(doc.apiVersion as string)) {
    errs.notSupported("apiVersion", doc.apiVersion, spec.apiVersions);
    return { errors: errs.messages() };
  }
  return spec.check(doc);
}
