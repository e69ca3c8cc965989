/**
 * The admission chain: the enabled plugins in their fixed order. Every write of the registry
 * runs `admit` (the mutating plugins, in order) before its schema and strategy checks and
 * `validate` (the validating plugins, in order) after them, just before the store.
 */

import type { AdmissionAttributes } from "./attributes.ts";
import type { AdmissionPlugin } from "./plugin.ts";

export class AdmissionChain {
  readonly plugins: readonly AdmissionPlugin[];
  readonly #mutating: readonly AdmissionPlugin[];
  readonly #validating: readonly AdmissionPlugin[];

  constructor(plugins: readonly AdmissionPlugin[]) {
    const names = new Set<string>();
    for (const p of plugins) {
      if (names.has(p.name)) throw new Error(`admission plugin ${p.name} is in the chain twice`);
      names.add(p.name);
    }
    this.plugins = plugins;
    this.#mutating = plugins.filter((p) => p.admit);
    this.#validating = plugins.filter((p) => p.validate);
  }

  /** The plugins' names, in order. */
  get names(): string[] {
    return this.plugins.map((p) => p.name);
  }

  /** The mutating phase: each mutating plugin that handles the operation, in order. */
  async admit(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.#mutating) {
      if (p.operations.includes(attrs.operation)) await p.admit!(attrs);
    }
  }

  /** The validating phase: each validating plugin that handles the operation, in order. */
  async validate(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.#validating) {
      if (p.operations.includes(attrs.operation)) await p.validate!(attrs);
    }
  }
}

/** A chain without plugins: every write is admitted. */
export const NO_ADMISSION = new AdmissionChain([]);
