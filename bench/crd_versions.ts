/**
 * CRD version figures for `deno task bench --only=crd-versions`: lists/s of 1,000 custom
 * resources served in a version that is not the storage version (`None` conversion: each
 * object's apiVersion rewritten), against the same list in the storage version. One server,
 * one CRD with both versions; after one discarded warm-up run of each, the figures are medians
 * of rounds that alternate between the two lists in the same run.
 */

import type { AuthOptions } from "./auth.ts";
import { admin, median } from "./figures_common.ts";

export interface CrdVersionsFigures {
  /** Lists/s of the 1,000 objects in the storage version (v1). */
  storage: number;
  /** Lists/s of the same objects in the served version v1beta1. */
  converted: number;
  problems: string[];
}

const OBJECTS = 1000;
const CONNECTIONS = 4;
const ROUNDS = 3;
const GROUP = "bench.example.com";

function crd(): unknown {
  const schema = {
    openAPIV3Schema: {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            size: { type: "integer" },
            name: { type: "string" },
            tags: { type: "array", items: { type: "string" } },
          },
        },
      },
    },
  };
  return {
    apiVersion: "apiextensions.platform.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `gadgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
      versions: [
        { name: "v1beta1", served: true, storage: false, schema },
        { name: "v1", served: true, storage: true, schema },
      ],
    },
  };
}

export async function crdVersionsFigures(o: AuthOptions): Promise<CrdVersionsFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  const server = await o.start(`${o.dir}/server`, []);
  try {
    const { api } = server;
    await admin(api, "/apis/apiextensions.platform.io/v1/customresourcedefinitions", crd());
    const collection = (v: string) => `/apis/${GROUP}/${v}/namespaces/default/gadgets`;
    // Wait until the versions are served.
    for (let i = 0;; i++) {
      const res = await fetch(api.url + collection("v1beta1"), {
        client: api.client,
        headers: api.headers,
      });
      await res.arrayBuffer();
      if (res.status === 200) break;
      if (i > 400) throw new Error(`the CRD was not served: ${res.status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    for (let i = 0; i < OBJECTS; i++) {
      await admin(api, collection("v1"), {
        apiVersion: `${GROUP}/v1`,
        kind: "Gadget",
        metadata: { name: `g-${i}`, labels: { app: "bench" } },
        spec: { size: i, name: `gadget ${i}`, tags: ["a", "b", "c"] },
      });
    }
    const list = (v: string) => ({
      method: "GET" as const,
      paths: [collection(v)],
      headers: {},
      expected: 200,
    });
    const modes = { storage: list("v1"), converted: list("v1beta1") };
    const runs: Record<keyof typeof modes, number[]> = { storage: [], converted: [] };
    // One discarded run of each first: the first lists build the per-object encodings each
    // version caches, and the server settles after the 1,000 creates.
    for (const mode of ["storage", "converted"] as const) {
      await o.measure(api, CONNECTIONS, o.ms, modes[mode]);
    }
    await new Promise((r) => setTimeout(r, 1_000));
    for (let round = 0; round < ROUNDS; round++) {
      const order = (["storage", "converted"] as const).slice();
      if (round % 2) order.reverse();
      for (const mode of order) {
        const r = await o.measure(api, CONNECTIONS, o.ms, modes[mode]);
        const label = mode === "storage" ? "v1 (storage)" : "v1beta1 (None conversion)";
        o.note(`list of ${OBJECTS} gadgets in ${label}: ${r.perSec.toFixed(1)}/s`);
        if (r.errors) problems.push(`${label}: ${r.errors} errors, first: ${r.firstError}`);
        runs[mode].push(r.perSec);
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    return { storage: median(runs.storage), converted: median(runs.converted), problems };
  } finally {
    await server.stop();
  }
}
