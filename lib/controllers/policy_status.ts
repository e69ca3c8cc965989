/**
 * The ValidatingAdmissionPolicy status controller (kube's): for every policy whose status has
 * not seen its generation, type-checks its expressions against the schemas of the kinds its
 * rules name (lib/admission/policy/type_check.ts) and writes `status.observedGeneration` and
 * `status.typeChecking` through the status subresource.
 */

import { type CheckedKind, typeCheckPolicy } from "../admission/mod.ts";
import { canonicalGroup, type Logger } from "../api/mod.ts";
import {
  apiVersionOf,
  type Catalogue,
  Informer,
  type KubeObject,
  type ResourceRegistry,
  type StrategyContext,
} from "../registry/mod.ts";
import type { SchemaSet } from "../schema/mod.ts";

const CONTEXT: StrategyContext = {
  user: {
    username: "system:serviceaccount:platform-system:validatingadmissionpolicy-status-controller",
    groups: ["system:serviceaccounts"],
  },
};

export interface PolicyStatusOptions {
  policies: ResourceRegistry;
  catalogue: Catalogue;
  /** The schemas of every served kind, custom resources' included. */
  schemas: () => SchemaSet;
  logger: Logger;
}

export class PolicyStatusController {
  readonly #o: PolicyStatusOptions;
  readonly #informer: Informer;
  #pending = Promise.resolve();

  constructor(o: PolicyStatusOptions) {
    this.#o = o;
    this.#informer = new Informer(o.policies, {
      logger: o.logger,
      onEvent: (ev) => {
        if (ev.type !== "ADDED" && ev.type !== "MODIFIED") return;
        const policy = ev.object;
        if (policy.status?.observedGeneration === policy.metadata?.generation) return;
        this.#pending = this.#pending.then(() => this.#check(policy));
      },
    });
  }

  start(): Promise<void> {
    return this.#informer.start();
  }

  async stop(): Promise<void> {
    await this.#informer.stop();
    await this.#pending;
  }

  async #check(policy: KubeObject): Promise<void> {
    const { catalogue, policies, logger } = this.#o;
    const resolve = (group: string, version: string, resource: string) => {
      const def = catalogue.lookup(canonicalGroup(group), version, resource);
      return def && ({ apiVersion: apiVersionOf(def), kind: def.kind, schema: def.schema }) as
        | CheckedKind
        | undefined;
    };
    const typeChecking = typeCheckPolicy(policy, this.#o.schemas(), resolve);
    const status = {
      ...policy.status,
      observedGeneration: policy.metadata.generation,
      typeChecking,
    };
    try {
      await policies.update("", policy.metadata.name, { ...policy, status }, CONTEXT, {
        subresource: "status",
        manager: "validatingadmissionpolicy-status-controller",
      });
    } catch (err) {
      // Changed or deleted meanwhile: its next event brings it back.
      const code = (err as { code?: number })?.code;
      if (code !== 409 && code !== 404) {
        logger.warn(`validatingadmissionpolicy ${policy.metadata.name}: status: ${err}`);
      }
    }
  }
}
