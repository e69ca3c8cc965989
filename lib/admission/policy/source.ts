/**
 * The stored policies and bindings, read from the store on every call (as the webhooks are:
 * a write is in force for the next request), each stored value parsed and compiled once, and
 * the answer made again only when a stored value changed. No bindings cost a key count.
 */

import type { KeyValue, Store } from "../../storage/mod.ts";
import { type Binding, bindingOf, type Policy, policyOf } from "./policy.ts";
import type { PolicySource } from "./validating_policy.ts";

type Current = { policies: ReadonlyMap<string, Policy>; bindings: readonly Binding[] };

const NONE: Current = { policies: new Map(), bindings: [] };

/** Whether two lists hold the same stored values (a write makes a new one). */
function same(a: readonly KeyValue[], b: readonly KeyValue[]): boolean {
  return a.length === b.length && a.every((kv, i) => kv === b[i]);
}

export class StoredPolicies implements PolicySource {
  readonly #store: Store;
  readonly #prefixes: { policies: string; bindings: string };
  readonly #policies = new WeakMap<KeyValue, Policy | undefined>();
  readonly #bindings = new WeakMap<KeyValue, Binding | undefined>();
  readonly #onUnreadable: (key: string, err: unknown) => void;
  /** The last answer and the stored values it was made from. */
  #last: { policyKvs: KeyValue[]; bindingKvs: KeyValue[]; current: Current } | undefined;

  constructor(
    store: Store,
    prefixes: { policies: string; bindings: string },
    onUnreadable: (key: string, err: unknown) => void = () => {},
  ) {
    this.#store = store;
    this.#prefixes = prefixes;
    this.#onUnreadable = onUnreadable;
  }

  async current(): Promise<Current> {
    if (this.#store.count(this.#prefixes.bindings) === 0) return NONE;
    const [policyKvs, bindingKvs] = await Promise.all([
      this.#store.list(this.#prefixes.policies),
      this.#store.list(this.#prefixes.bindings),
    ]);
    // Unchanged since the last call (the same stored values): the same answer, not a new copy.
    const last = this.#last;
    if (last && same(last.policyKvs, policyKvs.items) && same(last.bindingKvs, bindingKvs.items)) {
      return last.current;
    }
    const policies = new Map<string, Policy>();
    for (const kv of policyKvs.items) {
      const p = this.#parse(this.#policies, kv, policyOf);
      if (p) policies.set(p.name, p);
    }
    const bindings = bindingKvs.items.flatMap((kv) =>
      this.#parse(this.#bindings, kv, bindingOf) ?? []
    );
    const current = { policies, bindings };
    this.#last = { policyKvs: policyKvs.items, bindingKvs: bindingKvs.items, current };
    return current;
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
