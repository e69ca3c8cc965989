/**
 * Validation rule figures for `deno task bench` (see bench/README.md): 32-client creates/s of a
 * custom resource whose CRD has five validation rules (`x-kubernetes-validations`: a comparison
 * of two fields, a messageExpression with a fieldPath, a regex, a set membership and a
 * comprehension over a list), against the same CRD without rules. The two servers run on the
 * file store at the same time; the figures are medians of rounds that alternate between them,
 * after a first round on each to warm them up.
 */

import type { AuthOptions } from "./auth.ts";
import { admin, alternateRoundsCpu } from "./figures_common.ts";
import type { Api } from "./harness.ts";

export interface CrdRulesFigures {
  creates: Record<Mode, number>;
  /** The server's CPU time per create, µs (user + system, from /proc): less exposed to the
   * other load on the machine than the rate. */
  cpuMicros: Record<Mode, number>;
  problems: string[];
}

type Mode = "rules" | "none";

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const COLLECTION = "/apis/bench.example.com/v1/namespaces/default/gizmos";

const RULES = [
  { rule: "self.replicas <= self.maxReplicas", message: "replicas must not exceed maxReplicas" },
  {
    rule: "self.replicas >= 0",
    messageExpression: "'replicas is ' + string(self.replicas)",
    fieldPath: ".replicas",
  },
  { rule: "self.name.matches('^[a-z][a-z0-9-]*$')" },
  { rule: "!('forbidden' in self.tags)", reason: "FieldValueForbidden" },
  { rule: "self.tags.all(t, t.size() > 0)", message: "tags must not be empty strings" },
];

function crd(withRules: boolean) {
  return {
    apiVersion: "apiextensions.platform.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gizmos.bench.example.com" },
    spec: {
      group: "bench.example.com",
      scope: "Namespaced",
      names: { plural: "gizmos", kind: "Gizmo" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  replicas: { type: "integer" },
                  maxReplicas: { type: "integer" },
                  name: { type: "string", maxLength: 63 },
                  tags: {
                    type: "array",
                    maxItems: 16,
                    "x-kubernetes-list-type": "set",
                    items: { type: "string", maxLength: 32 },
                  },
                },
                ...(withRules ? { "x-kubernetes-validations": RULES } : {}),
              },
            },
          },
        },
      }],
    },
  };
}

/** Waits until the CRD's resource is served (Established). */
async function served(api: Api): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(api.url + COLLECTION, { client: api.client, headers: api.headers });
    await res.arrayBuffer();
    if (res.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${COLLECTION} was not served in time`);
}

export async function crdRulesFigures(o: AuthOptions): Promise<CrdRulesFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  const servers = {
    rules: await o.start(`${o.dir}/rules`, []),
    none: await o.start(`${o.dir}/none`, []),
  };
  try {
    for (const [mode, s] of Object.entries(servers)) {
      await admin(s.api, CRDS, crd(mode === "rules"));
      await served(s.api);
    }
    const create = {
      method: "POST" as const,
      paths: [COLLECTION],
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        apiVersion: "bench.example.com/v1",
        kind: "Gizmo",
        metadata: { generateName: "bench-" },
        spec: { replicas: 2, maxReplicas: 5, name: "gizmo-a", tags: ["a", "b", "c"] },
      }),
      expected: 201,
    };
    // A first round (not counted) warms both servers up: compiling the hot paths of the
    // create and of the rules is no part of a create's steady cost.
    for (const s of Object.values(servers)) await o.measure(s.api, 32, o.ms, create);
    await new Promise((r) => setTimeout(r, 2_000));
    const label = (m: Mode) =>
      `gizmo creates, ${m === "rules" ? "5 validation rules" : "no rules"}`;
    const { perSec, cpuMicros } = await alternateRoundsCpu(o, {
      servers,
      req: create,
      label,
      problems,
    });
    return { creates: perSec, cpuMicros, problems };
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
}
