/**
 * Keeps the `kubernetes` Service in `default` (the API server's own: the first cluster IP,
 * port `https` 443 to the secure port), as kube's bootstrap controller does: created at start,
 * put back when deleted, its ports corrected when the secure port changes. It also repairs the
 * allocation records of cluster IPs and node ports (service_ips.ts) at start and every few
 * minutes, releasing what a crash between allocation and write left behind.
 *
 * @module
 */

import type { Logger } from "../api/mod.ts";
import {
  Informer,
  type KubeObject,
  type ResourceRegistry,
  type StrategyContext,
} from "../registry/mod.ts";
import type { ServiceAllocator } from "../resources/mod.ts";

export const KUBERNETES_SERVICE = "kubernetes";
export const KUBERNETES_SERVICE_NAMESPACE = "default";

export interface ServiceControllerOptions {
  services: ResourceRegistry;
  allocator: ServiceAllocator;
  /** The port the Service's `https` port targets: the server's secure port. */
  securePort: number;
  /** The identity the controller writes as. */
  ctx: StrategyContext;
  logger: Logger;
  /** How often the Service and the allocation records are checked besides events.
   * @default 180000 (kube's repair interval, 3 minutes) */
  intervalMs?: number;
  /** Records younger than this are left alone by repair: their create may still be under way.
   * @default 60000 */
  repairGraceMs?: number;
}

/** The `kubernetes` Service's labels. */
export const KUBERNETES_SERVICE_LABELS = { component: "apiserver", provider: "kubernetes" };

export class ServiceController {
  readonly #opts: ServiceControllerOptions;
  readonly #informer: Informer;
  #timer?: ReturnType<typeof setInterval>;
  /** One pass at a time; an event during a pass asks for one more. */
  #running?: Promise<void>;
  #again = false;
  #stopped = false;

  constructor(opts: ServiceControllerOptions) {
    this.#opts = opts;
    this.#informer = new Informer(opts.services, {
      logger: opts.logger,
      onEvent: (ev) => {
        const meta = ev.object.metadata ?? {};
        if (meta.name === KUBERNETES_SERVICE && meta.namespace === KUBERNETES_SERVICE_NAMESPACE) {
          this.#kick();
        }
      },
    });
  }

  /** Repairs the records, makes sure of the Service, then follows changes. */
  async start(): Promise<void> {
    await this.#informer.start();
    await this.#repair();
    // Through the one loop the informer's events also use: never two creates at once.
    this.#kick();
    await this.#running;
    this.#timer = setInterval(() => {
      this.#repair().then(() => this.#kick());
    }, this.#opts.intervalMs ?? 180_000);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#informer.stop();
    await this.#running;
  }

  /** The Service as the server wants it. */
  desired(): KubeObject {
    const ip = this.#opts.allocator.firstIP();
    return {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: KUBERNETES_SERVICE,
        namespace: KUBERNETES_SERVICE_NAMESPACE,
        labels: { ...KUBERNETES_SERVICE_LABELS },
      },
      spec: {
        type: "ClusterIP",
        clusterIP: ip,
        clusterIPs: [ip],
        sessionAffinity: "None",
        ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: this.#opts.securePort }],
      },
    };
  }

  #kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        await this.#ensure();
      } while (this.#again && !this.#stopped);
    })().finally(() => this.#running = undefined);
  }

  async #ensure(): Promise<void> {
    if (this.#stopped) return;
    const { services, ctx, logger } = this.#opts;
    const want = this.desired();
    try {
      const have = await services.get(KUBERNETES_SERVICE_NAMESPACE, KUBERNETES_SERVICE).catch(
        (err) => {
          if (err?.code === 404) return undefined;
          throw err;
        },
      );
      if (!have) {
        await services.create(KUBERNETES_SERVICE_NAMESPACE, want, ctx, { manager: "platform" })
          .catch((err) => {
            if (err?.code !== 409) throw err;
          });
        return;
      }
      // Only the ports are corrected (the secure port may differ from the last start); other
      // changes are the administrator's, as in kube.
      const ports = have.spec?.ports ?? [];
      const wanted = want.spec.ports[0];
      const ok = ports.length === 1 && ports[0].name === wanted.name &&
        ports[0].port === wanted.port && ports[0].protocol === wanted.protocol &&
        ports[0].targetPort === wanted.targetPort && have.spec?.type === "ClusterIP";
      if (ok) return;
      have.spec.type = "ClusterIP";
      have.spec.ports = want.spec.ports;
      await services.update(KUBERNETES_SERVICE_NAMESPACE, KUBERNETES_SERVICE, have, ctx, {
        manager: "platform",
      });
    } catch (err) {
      if (!this.#stopped) logger.warn("cannot keep the kubernetes Service", err);
    }
  }

  async #repair(): Promise<void> {
    if (this.#stopped) return;
    const { allocator, logger } = this.#opts;
    try {
      const report = await allocator.reconcile(
        [...this.#informer.objects()],
        this.#opts.repairGraceMs ?? 60_000,
      );
      if (report.released.length) {
        logger.info(`released allocations no Service holds: ${report.released.join(", ")}`);
      }
      if (report.recorded.length) {
        logger.info(`recorded allocations of Services: ${report.recorded.join(", ")}`);
      }
      if (report.duplicates.length) {
        logger.warn(`held by more than one Service: ${report.duplicates.join(", ")}`);
      }
    } catch (err) {
      if (!this.#stopped) logger.warn("cannot repair the Service allocations", err);
    }
  }
}
