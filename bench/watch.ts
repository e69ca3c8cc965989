/**
 * Watch and paging figures for `deno task bench` (see bench/README.md):
 *
 *   - delivery lag of every event at every one of 1,000 watchers of one namespace's configmaps
 *     while a paced writer makes 200 writes/s there, next to the same with one watcher;
 *   - the server's RSS before and with the watchers connected;
 *   - 32-client creates/s with and without the watchers (the load itself is the caller's
 *     `measure()`, passed in);
 *   - paging through 10,000 and 100,000 configmaps, 500 per page.
 *
 * Times that cross from the writer to a watcher are `performance.timeOrigin + performance.now()`
 * (ms), carried in the object's data.
 */

import type { Api } from "./harness.ts";
import {
  createNamespace,
  fill,
  type FillResult,
  listRevision,
  type PageResult,
  pageThrough,
} from "./namespace_fill.ts";
import { rssBytes } from "./proc_stats.ts";
import { type LagResult, measureLag, sleep, WatchFleet } from "./watch_fleet.ts";
// --- the figures -----------------------------------------------------------------------------

/** What a load figure of main.ts (`measure()`) reports, as far as these figures need it. */
export interface Throughput {
  perSec: number;
  errors: number;
  firstError?: string;
}

export interface WatchFigures {
  /** The 200 writes/s writer seen by 1 watcher (the baseline) and by 1,000. */
  single: LagResult;
  fleet: LagResult;
  /** Server RSS (bytes) before the watchers connect, with them connected and idle, after the
   * writer's run. */
  rssBefore: number;
  rssWith: number;
  rssAfter: number;
  /** Milliseconds to open the 1,000 watches. */
  openMs: number;
  /** 32-client creates/s into the watched namespace without watchers; with the watchers, into
   * the watched namespace and into another one. */
  without: Throughput;
  withWatched: Throughput;
  withOther: Throughput;
  /** Watch streams the server ended while the bench still read them. */
  ended: number;
  problems: string[];
}

/**
 * The watch figures, on a server of their own: 1 and then `watchers` watchers of
 * `namespace`'s configmaps while a writer makes `perSec` writes/s there for `ms`; the server's
 * RSS around connecting the watchers; `creates(namespace)` (32-client creates, main.ts's
 * `measure()`) without and with the watchers. `settle(path, label)` is main.ts's `settle()`.
 */
export async function watchFigures(o: {
  api: Api;
  caPem: string;
  serverPid: number;
  namespace: string;
  /** A namespace nobody watches, for the creates that watchers should not notice. */
  otherNamespace: string;
  watchers: number;
  perSec: number;
  ms: number;
  baselineMs: number;
  drainTimeoutMs: number;
  creates: (namespace: string) => Promise<Throughput>;
  settle: (path: string, label: string) => Promise<unknown>;
  note: (msg: string) => void;
}): Promise<WatchFigures> {
  const problems: string[] = [];
  const collection = `/api/v1/namespaces/${o.namespace}/configmaps`;
  await createNamespace(o.api, o.namespace);
  const lagOpts = {
    collection,
    perSec: o.perSec,
    names: 100,
    serverPid: o.serverPid,
    drainTimeoutMs: o.drainTimeoutMs,
  };
  const describe = (label: string, r: LagResult) => {
    o.note(
      `${label}: ${r.acknowledged} of ${r.scheduled} writes acknowledged (${
        r.writesPerSec.toFixed(0)
      }/s, PUT p50 ${r.writeP50.toFixed(1)} ms, p99 ${r.writeP99.toFixed(1)} ms); ` +
        `${r.samples} deliveries, lag p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ` +
        `max ${r.max.toFixed(0)} ms; ${r.missed} missed, ${r.duplicates} duplicates; drained in ` +
        `${r.drainMs.toFixed(0)} ms; CPU: server ${r.serverCores.toFixed(2)}, bench ${
          r.clientCores.toFixed(2)
        }, other processes ${r.otherCores.toFixed(2)} cores`,
    );
    if (r.writeErrors) {
      problems.push(`${label}: ${r.writeErrors} writes failed: ${r.firstWriteError}`);
    }
    if (r.missed) {
      problems.push(
        `${label}: ${r.missed} (write, watcher) pairs not delivered ${
          (o.drainTimeoutMs / 1000).toFixed(0)
        } s after the last write (${r.watchersMissing} of ${r.watchers} watchers missed some)`,
      );
    }
    if (r.duplicates) problems.push(`${label}: ${r.duplicates} events delivered twice`);
    if (r.sent < r.scheduled) {
      problems.push(
        `${label}: the writer sent only ${r.sent} of ${r.scheduled} writes (${
          Math.round(r.sent / (o.ms / 1000))
        }/s of ${o.perSec}/s): the server did not keep up`,
      );
    }
  };

  // Baseline: the same writer, one watcher.
  const one = await WatchFleet.open({
    api: o.api,
    caPem: o.caPem,
    collection,
    resourceVersion: await listRevision(o.api, collection),
    count: 1,
  });
  const single = await measureLag(o.api, one, { ...lagOpts, ms: o.baselineMs, prefix: "one-" });
  await one.close();
  describe("watch lag, 1 watcher", single);

  const without = await o.creates(o.namespace);
  o.note(`creates/s, 32 clients, no watchers: ${without.perSec.toFixed(0)}`);
  await o.settle(`${collection}/one-0`, "after the creates without watchers");

  const rssBefore = await rssBytes(o.serverPid);
  const t0 = performance.now();
  const fleet = await WatchFleet.open({
    api: o.api,
    caPem: o.caPem,
    collection,
    resourceVersion: await listRevision(o.api, collection),
    count: o.watchers,
  });
  const openMs = performance.now() - t0;
  let fleetClosed = false;
  try {
    await sleep(500); // let the server finish setting the watches up
    const rssWith = await rssBytes(o.serverPid);
    o.note(
      `opened ${o.watchers} watches in ${openMs.toFixed(0)} ms; server RSS ${
        (rssBefore / 2 ** 20).toFixed(0)
      } MiB before, ${(rssWith / 2 ** 20).toFixed(0)} MiB with them (${
        ((rssWith - rssBefore) / 1024 / o.watchers).toFixed(1)
      } KiB per watcher)`,
    );
    const lag = await measureLag(o.api, fleet, { ...lagOpts, ms: o.ms, prefix: "w-" });
    describe(`watch lag, ${o.watchers} watchers`, lag);
    const rssAfter = await rssBytes(o.serverPid);
    o.note(`server RSS after the writer: ${(rssAfter / 2 ** 20).toFixed(0)} MiB`);

    await createNamespace(o.api, o.otherNamespace).catch(() => {}); // may exist
    const withOther = await o.creates(o.otherNamespace);
    o.note(
      `creates/s, 32 clients, into ${o.otherNamespace} with ${o.watchers} watchers on ${o.namespace}: ${
        withOther.perSec.toFixed(0)
      }`,
    );
    const events = fleet.events;
    const withWatched = await o.creates(o.namespace);
    o.note(
      `creates/s, 32 clients, into ${o.namespace} with ${o.watchers} watchers on it: ${
        withWatched.perSec.toFixed(0)
      } (the watchers received ${fleet.events - events} events meanwhile)`,
    );
    const ended = fleet.ended;
    if (ended) {
      problems.push(
        `${ended} of ${o.watchers} watch streams ended early; first: ${fleet.errors[0]}`,
      );
    } else if (fleet.errors.length) problems.push(`watch: ${fleet.errors[0]}`);
    await fleet.close();
    fleetClosed = true;
    await o.settle(`${collection}/one-0`, "after closing the watchers");
    return {
      single,
      fleet: lag,
      rssBefore,
      rssWith,
      rssAfter,
      openMs,
      without,
      withWatched,
      withOther,
      ended,
      problems,
    };
  } finally {
    if (!fleetClosed) await fleet.close();
  }
}

export interface PagingSize {
  count: number;
  fill: FillResult;
  /** Timed passes over all pages. */
  runs: PageResult[];
  /** Median pass, ms; per page and per item. */
  ms: number;
  msPerPage: number;
  msPerItem: number;
}

/**
 * For each of `counts`: that many configmaps in a namespace of their own (`fill()`), then
 * `runs` timed passes of {@link pageThrough} in pages of `limit` (after one untimed pass over
 * the smallest). Checks every pass saw exactly the objects created, in order, at one
 * resourceVersion.
 */
export async function pagingFigures(o: {
  api: Api;
  counts: number[];
  limit: number;
  runs: number;
  settle: (path: string, label: string) => Promise<unknown>;
  note: (msg: string) => void;
}): Promise<{ sizes: PagingSize[]; problems: string[] }> {
  const problems: string[] = [];
  const sizes: PagingSize[] = [];
  for (const count of o.counts) {
    const ns = `bench-page-${count}`;
    await createNamespace(o.api, ns);
    const fill_ = await fill(o.api, ns, count);
    o.note(
      `created ${fill_.created} configmaps in ${ns} at ${fill_.perSec.toFixed(0)}/s${
        fill_.errors ? `, ${fill_.errors} ERRORS, first: ${fill_.firstError}` : ""
      }`,
    );
    if (fill_.errors) {
      problems.push(`filling ${ns}: ${fill_.errors} errors, first: ${fill_.firstError}`);
    }
    sizes.push({ count, fill: fill_, runs: [], ms: NaN, msPerPage: NaN, msPerItem: NaN });
  }
  const last = sizes[sizes.length - 1];
  await o.settle(
    `/api/v1/namespaces/bench-page-${last.count}/configmaps/cm-000000`,
    "after the paging fills",
  );
  await pageThrough(o.api, `/api/v1/namespaces/bench-page-${sizes[0].count}/configmaps`, o.limit);
  for (const size of sizes) {
    const collection = `/api/v1/namespaces/bench-page-${size.count}/configmaps`;
    for (let i = 0; i < o.runs; i++) {
      const r = await pageThrough(o.api, collection, o.limit);
      size.runs.push(r);
      if (r.items !== size.fill.created) {
        problems.push(`paging ${collection}: ${r.items} items seen, ${size.fill.created} created`);
      }
      if (r.revisions.length !== 1) {
        problems.push(
          `paging ${collection}: the pages had ${r.revisions.length} resourceVersions (${
            r.revisions.slice(0, 5).join(", ")
          })`,
        );
      }
      if (r.outOfOrder) {
        problems.push(`paging ${collection}: ${r.outOfOrder} items out of order or repeated`);
      }
    }
    const sorted = [...size.runs].sort((a, b) => a.ms - b.ms);
    const median = sorted[sorted.length >> 1];
    size.ms = median.ms;
    size.msPerPage = median.ms / median.pages;
    size.msPerItem = median.ms / Math.max(1, median.items);
    o.note(
      `paged through ${median.items} configmaps in ${median.pages} pages of ${o.limit}: median ${
        median.ms.toFixed(0)
      } ms (${size.msPerPage.toFixed(1)} ms per page); runs ${
        size.runs.map((r) => r.ms.toFixed(0)).join(", ")
      } ms`,
    );
  }
  return { sizes, problems };
}
