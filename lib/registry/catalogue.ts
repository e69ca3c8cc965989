/**
 * The resource catalogue: every served {@link ResourceDefinition}, looked up by group,
 * version and resource. Discovery, OpenAPI and routing all read from here.
 */

import { apiVersionOf, type ResourceDefinition } from "./definition.ts";

export interface GroupVersion {
  group: string;
  version: string;
}

export class Catalogue {
  readonly definitions: readonly ResourceDefinition[];
  #byPath = new Map<string, ResourceDefinition>();

  constructor(definitions: ResourceDefinition[]) {
    this.definitions = definitions;
    for (const def of definitions) {
      const key = pathKey(def.group, def.version, def.plural);
      if (this.#byPath.has(key)) throw new Error(`duplicate resource definition ${key}`);
      this.#byPath.set(key, def);
    }
  }

  /** The definition served at `/api(s)/{group}/{version}/{plural}`, if any. */
  lookup(group: string, version: string, plural: string): ResourceDefinition | undefined {
    return this.#byPath.get(pathKey(group, version, plural));
  }

  /** Named groups (not the core group) in a stable order, each with its versions. */
  groups(): { name: string; versions: string[] }[] {
    const out = new Map<string, string[]>();
    for (const def of this.definitions) {
      if (!def.group) continue;
      const versions = out.get(def.group) ?? [];
      if (!versions.includes(def.version)) versions.push(def.version);
      out.set(def.group, versions);
    }
    return [...out].map(([name, versions]) => ({ name, versions }));
  }

  /** Every served group-version, core first. */
  groupVersions(): GroupVersion[] {
    const seen = new Set<string>();
    const out: GroupVersion[] = [];
    for (const def of this.definitions) {
      const gv = apiVersionOf(def);
      if (seen.has(gv)) continue;
      seen.add(gv);
      out.push({ group: def.group, version: def.version });
    }
    return out.sort((a, b) => (a.group === "" ? -1 : b.group === "" ? 1 : 0));
  }

  /** Definitions of one group-version. */
  resources(group: string, version: string): ResourceDefinition[] {
    return this.definitions.filter((d) => d.group === group && d.version === version);
  }

  /** Namespaced definitions that own their storage (what namespace deletion must empty). */
  namespacedStorage(): ResourceDefinition[] {
    return this.definitions.filter((d) => d.namespaced && !d.storage);
  }
}

function pathKey(group: string, version: string, plural: string): string {
  return `${group}/${version}/${plural}`;
}
