/**
 * The catalogue as discovery and OpenAPI show it. With Kubernetes group names on (the
 * default, `--kubernetes-group-names`), every built-in group is listed twice: under
 * Kubernetes' name (`rbac.authorization.k8s.io`) and under its canonical one
 * (`rbac.authorization.platform.io`), with the same resources. Requests under either name
 * reach the same objects (request_info.ts makes the group canonical); this only decides what
 * clients are told exists, so that manifests, kubectl and dynamic clients written for
 * Kubernetes find the kinds they name.
 *
 * The order makes kubectl's choice deterministic: for a name both spellings serve (`kubectl
 * get roles`, the short name `csr`), kubectl takes the group discovery lists first, and the
 * Kubernetes names come first. That is the spelling kubectl's own typed commands
 * (`certificate approve`) accept and what its users expect in `-o yaml`. A manifest's
 * `apiVersion`, or a resource named with its group (`roles.rbac.authorization.platform.io`),
 * picks its own spelling.
 */

import { isBuiltinGroup, kubeGroup } from "../api/mod.ts";
import { type Catalogue, groupsOf, type ResourceDefinition } from "../registry/mod.ts";

export class ServedCatalogue {
  readonly #catalogue: Catalogue;
  readonly #kubeNames: boolean;
  #revision = -1;
  #definitions: readonly ResourceDefinition[] = [];

  constructor(catalogue: Catalogue, opts: { kubernetesGroupNames?: boolean } = {}) {
    this.#catalogue = catalogue;
    this.#kubeNames = opts.kubernetesGroupNames ?? true;
  }

  /** Changes when the catalogue changes (see {@link Catalogue.revision}). */
  get revision(): number {
    return this.#catalogue.revision;
  }

  /** The served definitions, then (with Kubernetes names on) the built-in ones again under
   * Kubernetes' group names. */
  get definitions(): readonly ResourceDefinition[] {
    if (this.#revision !== this.#catalogue.revision) {
      this.#revision = this.#catalogue.revision;
      const defs = this.#catalogue.definitions;
      this.#definitions = this.#kubeNames ? withKubeNames(defs) : defs;
    }
    return this.#definitions;
  }

  /** Named groups (not the core group) in discovery order, each with its versions. */
  groups(): { name: string; versions: string[] }[] {
    return groupsOf(this.definitions);
  }

  /** Definitions of one group-version, in either spelling. */
  resources(group: string, version: string): ResourceDefinition[] {
    return this.definitions.filter((d) => d.group === group && d.version === version);
  }
}

/** `def` under Kubernetes' name of its group. Categories stay with the canonical entry, so
 * `kubectl get <category>` lists each object once. */
function kubeNamed(def: ResourceDefinition): ResourceDefinition {
  const named: ResourceDefinition = { ...def, group: kubeGroup(def.group) };
  delete named.categories;
  return named;
}

/** The core group's definitions, the built-in groups under Kubernetes' names, then every
 * definition under its own name. */
function withKubeNames(defs: readonly ResourceDefinition[]): ResourceDefinition[] {
  const core = defs.filter((d) => d.group === "");
  const kube = defs.filter((d) => isBuiltinGroup(d.group)).map(kubeNamed);
  return [...core, ...kube, ...defs.filter((d) => d.group !== "")];
}
