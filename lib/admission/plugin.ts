/**
 * An admission plugin: a named check (and possibly a change) every write passes before it is
 * stored. Mutating plugins run first and may change the object; validating plugins run after
 * the schema and the resource's own checks and may only refuse. A plugin refuses by throwing
 * a StatusError (403 Forbidden, 404 NotFound, 422 Invalid, …), which the client receives as
 * is.
 */

import type { AdmissionAttributes, Operation } from "./attributes.ts";

export interface AdmissionPlugin {
  /** kube's name where kube has the plugin (`NamespaceLifecycle`, `CertificateApproval`). */
  readonly name: string;
  /** The operations the plugin looks at; others skip it (kube's `Handles`). */
  readonly operations: readonly Operation[];
  /** Mutating phase: may change `attrs.object`. */
  admit?(attrs: AdmissionAttributes): Promise<void> | void;
  /** Validating phase: must not change anything. */
  validate?(attrs: AdmissionAttributes): Promise<void> | void;
}
