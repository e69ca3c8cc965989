/**
 * What the threads of `--workers` share besides the store: one link (a MessagePort with
 * {@link PortRpc} calls) between the main thread and each worker, over which
 *
 * - the audit log: each worker's events, as JSON lines, go to the main thread's one writer
 *   (`audit`, worker → main; the modes are in lib/audit/shared_log.ts);
 * - metrics: a scrape on any thread asks the others for their samples and merges them
 *   (lib/metrics/merge.ts): on the main thread it asks every worker (`threadMetrics`); on a
 *   worker it asks the main thread (`otherThreadsMetrics`), which answers with its own and
 *   every other worker's. A thread that does not answer within {@link SCRAPE_TIMEOUT_MS} is
 *   left out of that scrape (logged), so a dead worker never hangs a scrape;
 * - the serving certificate: a renewed or replaced one reaches every worker
 *   (`servingCertificate`, main → worker), which serves it to new connections as the main
 *   thread does, without a restart.
 *
 * The main thread's side is {@link WorkerLinks}, a worker's {@link MainThreadLink}.
 */

import type { Logger } from "../../api/mod.ts";
import type { AuditLogWriter, DeliverLines } from "../../audit/mod.ts";
import type { EventRateDecision } from "../../admission/mod.ts";
import {
  exposeFamilies,
  type FamilySamples,
  familySamples,
  mergeFamilies,
  type ServerMetrics,
} from "../../metrics/mod.ts";
import type { ServingPair } from "../serving_cert.ts";
import { PortRpc } from "./port_rpc.ts";

/** How long a scrape waits for another thread's samples. */
export const SCRAPE_TIMEOUT_MS = 2_000;
/** How long a worker waits for the main thread's EventRateLimit decision. */
const EVENT_RATE_TIMEOUT_MS = 5_000;
/** How long the main thread waits for a worker to take a renewed certificate. */
const CERTIFICATE_TIMEOUT_MS = 10_000;

interface AuditLines {
  text: string;
  events: number;
}

/** `/metrics`: this thread's exposition, or with other threads linked, every thread's
 * samples merged (this thread's first: its values stand where only one counts). */
export function scrapeThreads(metrics: ServerMetrics): string | Promise<string> {
  const peers = metrics.sources.peers;
  if (!peers) return metrics.registry.expose();
  const own = familySamples(metrics.registry);
  return peers().then((others) => exposeFamilies(mergeFamilies([own, ...others])));
}

/** The main thread's end of one worker's link. */
export interface WorkerLink {
  /** Goes to the worker. */
  port: MessagePort;
  /** Closes the link (the worker ended). */
  end(): void;
}

/** The main thread's ends of the links, one per running worker thread (a replaced worker
 * still draining has its own beside its successor's), each with the worker's name. */
export class WorkerLinks {
  readonly #links = new Map<PortRpc, string>();
  readonly #auditLog?: AuditLogWriter;
  readonly #metrics?: ServerMetrics;
  readonly #eventRates?: EventRateDecision;
  readonly #logger: Logger;

  constructor(opts: {
    auditLog?: AuditLogWriter;
    metrics?: ServerMetrics;
    /** EventRateLimit's buckets, the process's one set. */
    eventRates?: EventRateDecision;
    logger: Logger;
  }) {
    this.#auditLog = opts.auditLog;
    this.#metrics = opts.metrics;
    this.#eventRates = opts.eventRates;
    this.#logger = opts.logger;
    if (this.#metrics) this.#metrics.sources.peers = () => this.#scrapeWorkers();
  }

  /** Opens a link to a new worker thread, `name` in logs. */
  connect(name: string): WorkerLink {
    const { port1, port2 } = new MessageChannel();
    const rpc = new PortRpc(port1);
    rpc.handle("audit", (arg) => {
      const { text, events } = arg as AuditLines;
      if (!this.#auditLog) throw new Error("the main thread writes no audit log");
      return this.#auditLog.write(text, events);
    });
    rpc.handle("eventRate", (keys) => {
      if (!this.#eventRates) throw new Error("EventRateLimit does not run on the main thread");
      return this.#eventRates(keys as string[]);
    });
    rpc.handle("otherThreadsMetrics", async () => {
      const own = this.#metrics ? familySamples(this.#metrics.registry) : [];
      return [own, ...await this.#scrapeWorkers(rpc)];
    });
    this.#links.set(rpc, name);
    return {
      port: port2,
      end: () => {
        rpc.close();
        this.#links.delete(rpc);
      },
    };
  }

  /** Hands a renewed serving certificate to every worker; resolves once each took it (or
   * failed, logged). */
  async servingCertificate(pair: ServingPair): Promise<void> {
    await Promise.all(
      [...this.#links].map(([rpc, name]) =>
        rpc.call("servingCertificate", pair, { timeoutMs: CERTIFICATE_TIMEOUT_MS }).catch((err) =>
          this.#logger.warn(`${name} did not take the renewed serving certificate: ${err}`)
        )
      ),
    );
  }

  /** Closes every link. */
  close(): void {
    for (const rpc of this.#links.keys()) rpc.close();
    this.#links.clear();
    if (this.#metrics) this.#metrics.sources.peers = undefined;
  }

  /** The samples of every worker but `except`, leaving out those that do not answer. */
  async #scrapeWorkers(except?: PortRpc): Promise<FamilySamples[][]> {
    const answers = await Promise.all(
      [...this.#links].filter(([rpc]) => rpc !== except).map(([rpc, name]) =>
        rpc.call<FamilySamples[]>("threadMetrics", undefined, { timeoutMs: SCRAPE_TIMEOUT_MS })
          .catch((err) => {
            this.#logger.warn(`/metrics: ${name} left out: ${err}`);
            return undefined;
          })
      ),
    );
    return answers.filter((a) => a !== undefined);
  }
}

/** A worker's end of its link to the main thread. */
export class MainThreadLink {
  readonly #rpc: PortRpc;

  constructor(port: MessagePort) {
    this.#rpc = new PortRpc(port);
  }

  /** Where this worker's audit log lines go: the main thread's writer. */
  readonly deliverAuditLines: DeliverLines = (text, events) =>
    this.#rpc.call<boolean>("audit", { text, events } satisfies AuditLines);

  /** EventRateLimit's decisions, by the main thread's buckets; refused when it does not answer
   * in time. */
  readonly decideEventRate: EventRateDecision = (keys) =>
    this.#rpc.call<string | undefined>("eventRate", keys, { timeoutMs: EVENT_RATE_TIMEOUT_MS })
      .catch((err) => `the rate limits could not be asked (${err})`);

  /** Answers the main thread's scrapes with this thread's samples, and makes this thread's
   * scrapes ask for every other thread's. */
  shareMetrics(metrics: ServerMetrics, logger: Logger): void {
    this.#rpc.handle("threadMetrics", () => familySamples(metrics.registry));
    // The main thread waits up to SCRAPE_TIMEOUT_MS for each worker: a margin over it.
    metrics.sources.peers = () =>
      this.#rpc.call<FamilySamples[][]>("otherThreadsMetrics", undefined, {
        timeoutMs: SCRAPE_TIMEOUT_MS + 1_000,
      }).catch((err) => {
        logger.warn(`/metrics: the other threads left out: ${err}`);
        return [];
      });
  }

  /** Serves a certificate the main thread renewed with `serve`. */
  onServingCertificate(serve: (pair: ServingPair) => Promise<void>): void {
    this.#rpc.handle("servingCertificate", (pair) => serve(pair as ServingPair));
  }

  close(): void {
    this.#rpc.close();
  }
}
