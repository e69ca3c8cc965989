// deno-lint-ignore-file no-explicit-any
/**
 * Concurrent writers for the `--workers` tests: each creates ConfigMaps of its own, one at a
 * time, over a keep-alive connection of its own (the kernel puts each connection on a thread).
 * A request whose connection is cut is sent again on a new connection: then 201 means the cut
 * one was not applied, 409 AlreadyExists that it was. Every acknowledgement is recorded, so a
 * test can check that what was acknowledged is stored, once.
 */

export interface WriterTarget {
  url: string;
  caCertPem: string;
  token: string;
}

export interface WritersResult {
  /** name → the acknowledged resourceVersion and data. */
  acked: Map<string, { rv: string; data: Record<string, string> }>;
  /** Names whose create was cut and then found applied (409 on the retry). */
  appliedWhileCut: Set<string>;
  /** Requests cut (connection closed or reset before a response). */
  cuts: number;
  /** Without `retry`: the names whose create was cut (applied or not: the client cannot
   * know), and the statuses that ended a writer (a server going away). */
  cutNames: Set<string>;
  endedBy: string[];
  /** What must not happen: a 409 without a cut attempt, other statuses, retries exhausted. */
  violations: string[];
}

export interface Writers {
  result: WritersResult;
  /** Objects acknowledged so far by writer `w`. */
  count(w: number): number;
  /** Writers finish the object in hand and stop. */
  stop(): void;
  /** Resolves when every writer has stopped. */
  done: Promise<void>;
}

export const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";

/**
 * Starts `n` writers creating `<prefix><w>-<i>`. With `retry` a cut request is sent again
 * (up to 8 times) and any other answer than 201 or (after a cut) 409 is a violation; without,
 * a writer stops at its first cut or other answer than 201 (a server going away).
 */
export function startWriters(
  target: WriterTarget,
  n: number,
  prefix: string,
  opts: { retry: boolean },
): Writers {
  const result: WritersResult = {
    acked: new Map(),
    appliedWhileCut: new Set(),
    cuts: 0,
    cutNames: new Set(),
    endedBy: [],
    violations: [],
  };
  const counts = new Array(n).fill(0);
  let stopped = false;
  const writer = async (w: number) => {
    let client = Deno.createHttpClient({ caCerts: [target.caCertPem] });
    try {
      for (let i = 0; !stopped; i++) {
        const name = `${prefix}${w}-${i}`;
        const data = { writer: String(w), seq: String(i), payload: `${name}-`.repeat(20) };
        let wasCut = false;
        for (let attempt = 0;; attempt++) {
          if (attempt === 8) {
            result.violations.push(`${name}: not written in 8 attempts`);
            return;
          }
          let res: Response;
          try {
            res = await fetch(target.url + CONFIGMAPS, {
              method: "POST",
              client,
              headers: {
                Authorization: `Bearer ${target.token}`,
                "Content-Type": "application/json",
              },
              body: JSON.stringify({ metadata: { name }, data }),
            });
          } catch {
            result.cuts++;
            wasCut = true;
            client.close();
            client = Deno.createHttpClient({ caCerts: [target.caCertPem] });
            if (!opts.retry) {
              result.cutNames.add(name);
              result.endedBy.push("cut");
              return;
            }
            continue;
          }
          const body = await res.json().catch(() => undefined) as any;
          if (res.status === 201) {
            result.acked.set(name, { rv: body.metadata.resourceVersion, data });
            counts[w]++;
          } else if (res.status === 409 && body?.reason === "AlreadyExists" && wasCut) {
            result.appliedWhileCut.add(name);
            counts[w]++;
          } else if (!opts.retry) {
            result.endedBy.push(String(res.status));
            return;
          } else {
            result.violations.push(`${name}: ${res.status} ${JSON.stringify(body)}`);
            return;
          }
          break;
        }
      }
    } finally {
      client.close();
    }
  };
  const done = Promise.all(Array.from({ length: n }, (_, w) => writer(w))).then(() => {});
  return {
    result,
    count: (w) => counts[w],
    stop: () => stopped = true,
    done,
  };
}

/**
 * What is stored under `prefix` against what the writers saw: every acknowledged object with
 * its acknowledged resourceVersion and data, nothing that was not acknowledged, found applied
 * or cut in flight, and no two objects with one resourceVersion. Returns the problems.
 */
export function compareStored(items: any[], prefix: string, result: WritersResult): string[] {
  const problems: string[] = [];
  const stored = new Map<string, any>();
  const revisions = new Set<string>();
  for (const item of items) {
    const name = item.metadata.name as string;
    if (!name.startsWith(prefix)) continue;
    stored.set(name, item);
    if (revisions.has(item.metadata.resourceVersion)) {
      problems.push(`${name}: resourceVersion ${item.metadata.resourceVersion} twice`);
    }
    revisions.add(item.metadata.resourceVersion);
    if (
      !result.acked.has(name) && !result.appliedWhileCut.has(name) && !result.cutNames.has(name)
    ) {
      problems.push(`${name}: stored but never acknowledged, found applied or cut`);
    }
  }
  for (const [name, want] of result.acked) {
    const got = stored.get(name);
    if (!got) problems.push(`${name}: acknowledged (rv ${want.rv}) but not stored`);
    else if (got.metadata.resourceVersion !== want.rv) {
      problems.push(`${name}: acknowledged rv ${want.rv}, stored ${got.metadata.resourceVersion}`);
    } else if (sorted(got.data) !== sorted(want.data)) {
      problems.push(`${name}: stored data differs from the acknowledged`);
    }
  }
  for (const name of result.appliedWhileCut) {
    if (!stored.has(name)) problems.push(`${name}: a retry found it (409) but it is not stored`);
  }
  return problems;
}

/** A string map as JSON with its keys in order. */
function sorted(data: Record<string, string> | undefined): string {
  return JSON.stringify(Object.entries(data ?? {}).sort(([a], [b]) => a < b ? -1 : 1));
}
