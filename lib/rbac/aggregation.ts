/**
 * The ClusterRole aggregation controller (kube-controller-manager's `clusterrole-aggregation`):
 * a ClusterRole with `aggregationRule.clusterRoleSelectors` gets as `rules` the rules of every
 * other ClusterRole its selectors match, selector by selector, roles by name, each rule once.
 * Any ClusterRole change brings every aggregated role up to date again, so chains (view into
 * edit into admin) settle.
 */

import { jsonEqual, labelSelectorFromObject, type Logger, StatusError } from "../api/mod.ts";
import {
  Informer,
  type KubeObject,
  type ResourceRegistry,
  type StrategyContext,
} from "../registry/mod.ts";
import { SYSTEM_MASTERS } from "./escalation.ts";

const MANAGER = "clusterrole-aggregation-controller";
const CONTEXT: StrategyContext = {
  user: {
    username: "system:serviceaccount:platform-system:clusterrole-aggregation-controller",
    groups: [SYSTEM_MASTERS, "system:authenticated"],
  },
};

export interface AggregationOptions {
  clusterRoles: ResourceRegistry;
  logger: Logger;
}

export class ClusterRoleAggregator {
  readonly #opts: AggregationOptions;
  readonly #informer: Informer;
  #stopped = false;
  /** The pass running now, and whether another must follow it. */
  #pass?: Promise<void>;
  #again = false;

  constructor(opts: AggregationOptions) {
    this.#opts = opts;
    this.#informer = new Informer(opts.clusterRoles, {
      logger: opts.logger,
      onEvent: () => this.#schedule(),
    });
  }

  /** Loads the ClusterRoles and aggregates them once; then follows changes. */
  async start(): Promise<void> {
    await this.#informer.start();
    this.#schedule();
    await this.#pass;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#informer.stop();
    await this.#pass;
  }

  #schedule(): void {
    if (this.#stopped) return;
    if (this.#pass) {
      this.#again = true;
      return;
    }
    this.#pass = (async () => {
      try {
        do {
          this.#again = false;
          await this.#aggregateAll();
        } while (this.#again && !this.#stopped);
      } finally {
        this.#pass = undefined;
      }
    })();
  }

  async #aggregateAll(): Promise<void> {
    const all = [...this.#informer.objects()];
    for (const role of all) {
      if (this.#stopped) return;
      if (!role.aggregationRule) continue;
      const rules = aggregatedRules(role, all);
      if (rules === undefined || jsonEqual(rules, role.rules ?? [])) continue;
      try {
        await this.#opts.clusterRoles.patch(
          "",
          role.metadata.name,
          {
            type: "merge",
            body: { rules },
          },
          CONTEXT,
          { manager: MANAGER },
        );
      } catch (err) {
        // Gone meanwhile: its deletion brings another pass.
        if (err instanceof StatusError && err.code === 404) continue;
        this.#opts.logger.error(`clusterrole aggregation: ${role.metadata.name}`, err);
      }
    }
  }
}

/** The rules `role` aggregates from `all`; undefined when a selector is invalid. */
export function aggregatedRules(role: KubeObject, all: KubeObject[]): KubeObject[] | undefined {
  const rules: KubeObject[] = [];
  const selectors = role.aggregationRule?.clusterRoleSelectors ?? [];
  const sorted = [...all].sort((a, b) => a.metadata.name < b.metadata.name ? -1 : 1);
  for (const selector of Array.isArray(selectors) ? selectors : []) {
    let matches;
    try {
      matches = labelSelectorFromObject(selector ?? {});
    } catch {
      return undefined;
    }
    for (const other of sorted) {
      if (other.metadata.name === role.metadata.name) continue;
      if (!matches.matches(other.metadata.labels)) continue;
      for (const rule of Array.isArray(other.rules) ? other.rules : []) {
        if (!rules.some((r) => jsonEqual(r, rule))) rules.push(rule);
      }
    }
  }
  return rules;
}
