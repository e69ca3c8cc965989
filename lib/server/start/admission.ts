/**
 * Start-up step 5a: the admission chain every write of every registry passes. The plugins are
 * listed once, in kube's order (mutating before validating within each plugin's phase is the
 * chain's job, not this list's); each is made from what the server has opened.
 */

import { AdmissionChain, type AdmissionPlugin, namespaceLifecycle } from "../../admission/mod.ts";
import { certificateApproval, certificateSigning } from "../../certificates/mod.ts";
import { namespaceLookup } from "../../controllers/mod.ts";
import type { Store } from "../../storage/mod.ts";

/** What plugins may be made from. */
export interface AdmissionSources {
  store: Store;
}

/** An admission plugin the server has: kube's name, and how to make it. */
export interface AdmissionPluginEntry {
  name: string;
  make(sources: AdmissionSources): AdmissionPlugin;
}

/** Every admission plugin, in kube's order (its `AllOrderedPlugins`). */
export const ADMISSION_PLUGINS: readonly AdmissionPluginEntry[] = [
  { name: "NamespaceLifecycle", make: ({ store }) => namespaceLifecycle(namespaceLookup(store)) },
  { name: "CertificateApproval", make: () => certificateApproval },
  { name: "CertificateSigning", make: () => certificateSigning },
];

/** The chain of the enabled plugins (today: all of them). */
export function buildAdmission(sources: AdmissionSources): AdmissionChain {
  return new AdmissionChain(ADMISSION_PLUGINS.map((p) => p.make(sources)));
}
