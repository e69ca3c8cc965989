/**
 * The resource catalogue: every served {@link ResourceDefinition}, looked up by group,
 * version and resource. Discovery, OpenAPI and routing all read from here.
 *
 * Built-in definitions are given at construction; definitions made from
 * CustomResourceDefinitions come and go at runtime through {@link Catalogue.add},
 * {@link Catalogue.replace} and {@link Catalogue.remove}. Each change bumps
 * {@link Catalogue.revision}, which caches derived from the catalogue (OpenAPI documents)
 * compare to know when to rebuild. Readers always see a consistent set: a change swaps the
 * whole list at once.
 */

import { apiVersionOf, type ResourceDefinition } from "./definition.ts";

export interface GroupVersion {
  group: string;
  version: string;
}

export class Catalogue {
  #definitions: readonly ResourceDefinition[];
  #byPath = new Map<string, ResourceDefinition>();
  #revision = 0;
  #listeners = new Set<() => void>();

  constructor(definitions: ResourceDefinition[]) {
    for (const def of definitions) {
      const key = pathKey(def.group, def.version, def.plural);
      if (this.#byPath.has(key)) throw new Error(`duplicate resource definition ${key}`);
      this.#byPath.set(key, def);
    }
    this.#definitions = [...definitions];
  }

  /** Every served definition, built-ins first, then runtime ones in the order added. */
  get definitions(): readonly ResourceDefinition[] {
    return this.#definitions;
  }

  /** Counts changes since construction: equal revisions mean the same definitions. */
  get revision(): number {
    return this.#revision;
  }

  /** Calls `listener` after every change; returns a function that unsubscribes. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The definition served at `/api(s)/{group}/{version}/{plural}`, if any. */
  lookup(group: string, version: string, plural: string): ResourceDefinition | undefined {
    return this.#byPath.get(pathKey(group, version, plural));
  }

  /** Serves `def`. Throws when its group/version/plural is already served. */
  add(def: ResourceDefinition): void {
    this.replace(undefined, def);
  }

  /**
   * Serves `next` instead of `old` in one step (`old` undefined: a plain add). Throws when
   * `next` would take a path that another definition serves.
   */
  replace(old: ResourceDefinition | undefined, next: ResourceDefinition): void {
    const key = pathKey(next.group, next.version, next.plural);
    const holder = this.#byPath.get(key);
    if (holder && holder !== old) throw new Error(`duplicate resource definition ${key}`);
    if (old && !this.#definitions.includes(old)) {
      throw new Error(`resource definition ${defKey(old)} is not in the catalogue`);
    }
    if (old) this.#byPath.delete(defKey(old));
    this.#byPath.set(key, next);
    this.#definitions = old
      ? this.#definitions.map((d) => (d === old ? next : d))
      : [...this.#definitions, next];
    this.#changed();
  }

  /** Stops serving `def`; false when it was not served. */
  remove(def: ResourceDefinition): boolean {
    if (!this.#definitions.includes(def)) return false;
    this.#byPath.delete(defKey(def));
    this.#definitions = this.#definitions.filter((d) => d !== def);
    this.#changed();
    return true;
  }

  /** Named groups (not the core group) in a stable order, each with its versions. */
  groups(): { name: string; versions: string[] }[] {
    return groupsOf(this.#definitions);
  }

  /** Every served group-version, core first. */
  groupVersions(): GroupVersion[] {
    const seen = new Set<string>();
    const out: GroupVersion[] = [];
    for (const def of this.#definitions) {
      const gv = apiVersionOf(def);
      if (seen.has(gv)) continue;
      seen.add(gv);
      out.push({ group: def.group, version: def.version });
    }
    return out.sort((a, b) => (a.group === "" ? -1 : b.group === "" ? 1 : 0));
  }

  /** Definitions of one group-version. */
  resources(group: string, version: string): ResourceDefinition[] {
    return this.#definitions.filter((d) => d.group === group && d.version === version);
  }

  /** Namespaced definitions that own their storage (what namespace deletion must empty): one
   * per stored resource. The versions of a CRD all store where they are served (the first
   * served version stands for them); a definition stored as another resource is not one. */
  namespacedStorage(): ResourceDefinition[] {
    const seen = new Set<string>();
    return this.#definitions.filter((d) => {
      if (!d.namespaced) return false;
      const own = `${d.group}/${d.plural}`;
      if (d.storage && `${d.storage.group}/${d.storage.resource}` !== own) return false;
      if (seen.has(own)) return false;
      seen.add(own);
      return true;
    });
  }

  #changed(): void {
    this.#revision++;
    for (const listener of this.#listeners) listener();
  }
}

/** The named groups (not the core group) of `defs`, in the order they first appear, each with
 * its versions. */
export function groupsOf(
  defs: readonly ResourceDefinition[],
): { name: string; versions: string[] }[] {
  const out = new Map<string, string[]>();
  for (const def of defs) {
    if (!def.group) continue;
    const versions = out.get(def.group) ?? [];
    if (!versions.includes(def.version)) versions.push(def.version);
    out.set(def.group, versions);
  }
  return [...out].map(([name, versions]) => ({ name, versions }));
}

function pathKey(group: string, version: string, plural: string): string {
  return `${group}/${version}/${plural}`;
}

function defKey(def: ResourceDefinition): string {
  return pathKey(def.group, def.version, def.plural);
}
