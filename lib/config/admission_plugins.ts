/**
 * The admission plugins the server has, by kube's names and in kube's order (its
 * `AllOrderedPlugins`), for `--enable-admission-plugins` and `--disable-admission-plugins`. The
 * configuration does not import the admission chain (a higher layer): the chain's table
 * (`ADMISSION_PLUGINS` in lib/server/start/admission.ts) lists the same names in the same order,
 * which a test checks. A plugin named here before its table entry lands is accepted by the
 * flags and simply not built.
 *
 * @module
 */

import { quote } from "./config_error.ts";

/** Every admission plugin name, in the order enabled plugins run (kube's). */
export const ADMISSION_PLUGIN_NAMES = [
  "NamespaceLifecycle",
  "EventRateLimit",
  "CertificateApproval",
  "CertificateSigning",
  "MutatingAdmissionWebhook",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionWebhook",
] as const;

/** The plugins that are off unless `--enable-admission-plugins` names them (as in kube). */
export const DEFAULT_OFF_ADMISSION_PLUGINS: readonly string[] = ["EventRateLimit"];

/**
 * `name` when it is a known plugin.
 *
 * @throws {Error} `plugin "Foo" is unknown (known plugins: NamespaceLifecycle, …)`.
 */
export function checkAdmissionPluginName(name: string): string {
  if ((ADMISSION_PLUGIN_NAMES as readonly string[]).includes(name)) return name;
  throw new Error(
    `plugin ${quote(name)} is unknown (known plugins: ${ADMISSION_PLUGIN_NAMES.join(", ")})`,
  );
}

/** The first plugin in both lists, if any. */
export function admissionPluginOverlap(
  enable: readonly string[],
  disable: readonly string[],
): string | undefined {
  return enable.find((name) => disable.includes(name));
}

/**
 * The plugins that run, in kube's order: every plugin on by default and those enabled, less
 * those disabled. Names are not checked here ({@link checkAdmissionPluginName}).
 */
export function enabledAdmissionPlugins(
  enable: readonly string[] = [],
  disable: readonly string[] = [],
): string[] {
  return ADMISSION_PLUGIN_NAMES.filter((name) =>
    (enable.includes(name) || !DEFAULT_OFF_ADMISSION_PLUGINS.includes(name)) &&
    !disable.includes(name)
  );
}
