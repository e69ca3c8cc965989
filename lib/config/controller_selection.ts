/**
 * The controllers `--controllers` selects among, and the selection rule: {@link
 * isControllerEnabled} answers whether a controller runs under a selection such as
 * `["*", "-csrsigning"]`, as Kubernetes does; {@link parseControllerEntry} rejects a misspelt
 * name, which would otherwise select nothing, silently.
 *
 * @module
 */

import { quote } from "./config_error.ts";

/** The controllers `--controllers` selects among (all on by default); a new one goes here. */
export const CONTROLLERS = [
  "clusterrole-aggregation",
  "csrapproving",
  "csrsigning",
  "root-ca-cert-publisher",
  "serviceaccount",
  "validatingadmissionpolicy-status-controller",
] as const;

/** One entry of a `--controllers` selection: `*`, `name` or `-name` of a known controller. */
export function parseControllerEntry(entry: string): string {
  if (entry === "*") return entry;
  const name = entry.replace(/^-/, "");
  if ((CONTROLLERS as readonly string[]).includes(name)) return entry;
  // A misspelt name would otherwise select nothing, silently.
  throw new Error(
    `${quote(entry)} is not a controller selector ("*", "name" or "-name"); the ` +
      `controllers are ${CONTROLLERS.join(", ")}`,
  );
}

/** Options of {@link isControllerEnabled}. */
export interface ControllerOptions {
  /** Controllers that `*` does not start; they run only when named. @default [] */
  disabledByDefault?: readonly string[];
}

/**
 * Whether a controller runs under a `--controllers` selection, as in Kubernetes: the first
 * entry naming it (`name` or `-name`) decides; otherwise `*` starts it unless it is disabled
 * by default; without `*` it does not run.
 *
 * @example
 * ```ts
 * isControllerEnabled(["*", "-csrsigning"], "csrsigning"); // false
 * isControllerEnabled(["*"], "csrapproving"); // true
 * ```
 */
export function isControllerEnabled(
  controllers: readonly string[],
  name: string,
  opts: ControllerOptions = {},
): boolean {
  let star = false;
  for (const entry of controllers) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
    if (entry === "*") star = true;
  }
  return star && !(opts.disabledByDefault ?? []).includes(name);
}
