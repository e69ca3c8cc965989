/**
 * The webhooks of the stored configurations, read from the store on every call: a write of a
 * configuration is in force for the next request after it is acknowledged, on this server
 * and, read from the same store, on every replica. Each stored value is parsed once (values
 * are immutable: a write makes a new one), and a resource without configurations costs a
 * key count.
 */

import type { KeyValue, Store } from "../../storage/mod.ts";
import type { WebhookSource } from "./dispatcher.ts";
import { type Webhook, webhooksOf, type WebhookType } from "./webhook.ts";

export class StoredWebhooks implements WebhookSource {
  readonly #store: Store;
  readonly #prefixes: Record<WebhookType, string>;
  readonly #parsed = new WeakMap<KeyValue, Webhook[]>();
  readonly #onUnreadable: (key: string, err: unknown) => void;

  /** `prefixes`: the store prefix of each configuration resource. */
  constructor(
    store: Store,
    prefixes: Record<WebhookType, string>,
    onUnreadable: (key: string, err: unknown) => void = () => {},
  ) {
    this.#store = store;
    this.#prefixes = prefixes;
    this.#onUnreadable = onUnreadable;
  }

  async webhooks(type: WebhookType): Promise<readonly Webhook[]> {
    const prefix = this.#prefixes[type];
    if (this.#store.count(prefix) === 0) return [];
    // Keys are the prefix and the configuration's name: listed in name order, as kube sorts.
    const { items } = await this.#store.list(prefix);
    return items.flatMap((kv) => {
      let hooks = this.#parsed.get(kv);
      if (!hooks) {
        try {
          hooks = webhooksOf(type, JSON.parse(kv.value));
        } catch (err) {
          this.#onUnreadable(kv.key, err);
          hooks = [];
        }
        this.#parsed.set(kv, hooks);
      }
      return hooks;
    });
  }
}
