/**
 * The stored policies and bindings, read from the store on every call (as the webhooks are:
 * a write is in force for the next request), each stored value parsed and compiled once. No
 * bindings cost a key count.
 */

import type { KeyValue, Store } from "../../storage/mod.ts";
import { type Binding, bindingOf, type Policy, policyOf } from "./policy.ts";
import type { PolicySource } from "./validating_policy.ts";

export class StoredPolicies implements PolicySource {
  readonly #store: Store;
  readonly #prefixes: { policies: string; bindings: string };
  readonly #policies = new WeakMap<KeyValue, Policy | undefined>();
  readonly #bindings = new WeakMap<KeyValue, Binding | undefined>();
  readonly #onUnreadable: (key: string, err: unknown) => void;

  constructor(
    store: Store,
    prefixes: { policies: string; bindings: string },
    onUnreadable: (key: string, err: unknown) => void = () => {},
  ) {
    this.#store = store;
    this.#prefixes = prefixes;
    this.#onUnreadable = onUnreadable;
  }

  async current(): Promise<
    { policies: ReadonlyMap<string, Policy>; bindings: readonly Binding[] }
  > {
    if (this.#store.count(this.#prefixes.bindings) === 0) {
      return { policies: new Map(), bindings: [] };
    }
    const [policyKvs, bindingKvs] = await Promise.all([
      this.#store.list(this.#prefixes.policies),
      this.#store.list(this.#prefixes.bindings),
    ]);
    const policies = new Map<string, Policy>();
    for (const kv of policyKvs.items) {
      const p = this.#parse(this.#policies, kv, policyOf);
      if (p) policies.set(p.name, p);
    }
    const bindings = bindingKvs.items.flatMap((kv) =>
      this.#parse(this.#bindings, kv, bindingOf) ?? []
    );
    return { policies, bindings };
  }

  #parse<T>(
    cache: WeakMap<KeyValue, T | undefined>,
    kv: KeyValue,
    of: (o: never) => T,
  ): T | undefined {
    if (cache.has(kv)) return cache.get(kv);
    let out: T | undefined;
    try {
      out = of(JSON.parse(kv.value) as never);
    } catch (err) {
      this.#onUnreadable(kv.key, err);
    }
    cache.set(kv, out);
    return out;
  }
}
