/**
 * Admission figures for `deno task bench` (see bench/README.md). Webhooks: 32-client configmap
 * creates/s on one server while it has no admission configuration and while one mutating and
 * one validating webhook (served over HTTPS by this process, answering at once) select every
 * create, alternating in rounds (a configuration is in force for the next request); with one
 * client, the p50 and p99 latency a create gains from the two round trips. A policy: one
 * ValidatingAdmissionPolicy of three validations, bound, on a server of its own against one
 * without, as the audit figures compare (bench/server_sets.ts: three sets of servers, each
 * ratio the median of the rounds' own), creates/s and the server's CPU per create.
 */

import { ensurePki } from "../lib/certificates/pki.ts";
import type { AuthOptions, AuthServer } from "./auth.ts";
import { type Api, median } from "./harness.ts";
import { compareServers, type Ratios, type ServerValues, startEach } from "./server_sets.ts";

export interface AdmissionFigures {
  createsNone: number;
  createsWebhooks: number;
  /** One client: create latency (ms) without configuration and with the two webhooks. */
  p50None: number;
  p99None: number;
  p50Webhooks: number;
  p99Webhooks: number;
  /** A server with the policy against one without. */
  policy: { values: ServerValues<PolicyMode>; ratios: Ratios };
  problems: string[];
}

type PolicyMode = "policy" | "none";

const CONNECTIONS = 32;
const ROUNDS = 3;
const COLLECTION = "/api/v1/namespaces/default/configmaps";
const GROUP = "/apis/admissionregistration.platform.io/v1";
const RULES = [{
  operations: ["CREATE"],
  apiGroups: [""],
  apiVersions: ["v1"],
  resources: ["configmaps"],
}];

type State = "none" | "webhooks";

type Stored = { metadata: { name: string } } & Record<string, unknown>;

/** The policy state's objects: one ValidatingAdmissionPolicy of three validations and its
 * binding (also what `bench/pair_profile.ts --feature=policy` profiles). */
export const POLICY_OBJECTS: [string, Stored][] = [
  [`${GROUP}/validatingadmissionpolicies`, {
    metadata: { name: "bench" },
    spec: {
      matchConstraints: { resourceRules: RULES },
      validations: [
        { expression: "size(object.data) <= 16", message: "at most 16 keys" },
        {
          expression: "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)",
        },
        { expression: "object.metadata.name.startsWith('bench-')" },
      ],
    },
  }],
  [`${GROUP}/validatingadmissionpolicybindings`, {
    metadata: { name: "bench" },
    spec: { policyName: "bench", validationActions: ["Deny"] },
  }],
];

export async function admissionFigures(o: AuthOptions): Promise<AdmissionFigures> {
  const problems: string[] = [];
  const policy = await policyFigures(o, problems);
  return { ...await webhookFigures(o, problems), policy, problems };
}

/** A server whose policy checks every configmap create against one without. */
async function policyFigures(
  o: AuthOptions,
  problems: string[],
): Promise<AdmissionFigures["policy"]> {
  const modes: PolicyMode[] = ["policy", "none"];
  const c = await compareServers<PolicyMode>(o, {
    modes,
    start: (dir, order) => startEach(modes, order, (m) => o.start(`${dir}/${m}`, [])),
    name: (m) => m === "policy" ? "1 ValidatingAdmissionPolicy" : "no admission",
    problems,
    beforeRounds: (servers) => bindPolicy(servers.policy, problems),
    createsOnly: true,
  });
  return { values: c.values, ratios: c.ratios("policy", "none") };
}

/** Writes the policy and its binding, and checks that it is in force: a create it refuses. */
async function bindPolicy(server: AuthServer, problems: string[]): Promise<void> {
  for (const [path, obj] of POLICY_OBJECTS) await call(server.api, "POST", path, obj);
  const res = await fetch(server.api.url + COLLECTION, {
    method: "POST",
    client: server.api.client,
    headers: { ...server.api.headers, "Content-Type": "application/json" },
    body: JSON.stringify({ metadata: { name: "not-bench" } }),
  });
  await res.arrayBuffer();
  if (res.status !== 422) problems.push(`policy: a create it should refuse got ${res.status}`);
}

/** No configuration against two webhooks, alternating on one server. */
async function webhookFigures(
  o: AuthOptions,
  problems: string[],
): Promise<Omit<AdmissionFigures, "policy" | "problems">> {
  await Deno.mkdir(o.dir, { recursive: true });
  const pki = await ensurePki({
    dataDir: `${o.dir}/webhook`,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  const patch = btoa(
    JSON.stringify([{ op: "add", path: "/metadata/annotations", value: { seen: "yes" } }]),
  );
  const hook = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: pki.servingCertPem,
    key: pki.servingKeyPem,
    onListen: () => {},
  }, async (req) => {
    const review = await req.json();
    const mutating = new URL(req.url).pathname === "/mutate";
    const response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
    if (mutating) Object.assign(response, { patchType: "JSONPatch", patch });
    return Response.json({ apiVersion: review.apiVersion, kind: "AdmissionReview", response });
  });
  const server = await o.start(`${o.dir}/server`, []);
  const hookUrl = `https://127.0.0.1:${hook.addr.port}`;
  const webhook = (path: string) => ({
    name: `${path}.bench.example.com`,
    clientConfig: { url: `${hookUrl}/${path}`, caBundle: btoa(pki.caCertPem) },
    rules: RULES,
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
  });
  const objects: Record<Exclude<State, "none">, [string, Stored][]> = {
    webhooks: [
      [`${GROUP}/mutatingwebhookconfigurations`, {
        metadata: { name: "bench" },
        webhooks: [webhook("mutate")],
      }],
      [`${GROUP}/validatingwebhookconfigurations`, {
        metadata: { name: "bench" },
        webhooks: [webhook("validate")],
      }],
    ],
  };
  let state: State = "none";
  const enter = async (next: State) => {
    if (state !== "none") {
      for (const [path, obj] of objects[state]) {
        await call(server.api, "DELETE", `${path}/${obj.metadata.name}`);
      }
    }
    if (next !== "none") {
      for (const [path, obj] of objects[next]) await call(server.api, "POST", path, obj);
    }
    state = next;
  };
  const create = {
    method: "POST" as const,
    paths: [COLLECTION],
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      metadata: { generateName: "bench-" },
      data: { a: "1", b: "2", c: "3" },
    }),
    expected: 201,
  };
  try {
    const runs: Record<State, number[]> = { none: [], webhooks: [] };
    const latency: Record<"none" | "webhooks", { p50: number; p99: number }[]> = {
      none: [],
      webhooks: [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order: State[] = round % 2 ? ["webhooks", "none"] : ["none", "webhooks"];
      for (const s of order) {
        await enter(s);
        const r = await o.measure(server.api, CONNECTIONS, o.ms, create);
        o.note(`configmap creates, 32 clients, admission ${s}: ${Math.round(r.perSec)}/s`);
        if (r.errors) {
          problems.push(`creates with ${s}: ${r.errors} errors, first: ${r.firstError}`);
        }
        runs[s].push(r.perSec);
        const one = await o.measure(server.api, 1, o.ms / 2, create);
        latency[s].push({ p50: one.p50 ?? NaN, p99: one.p99 ?? NaN });
        await new Promise((r) => setTimeout(r, 1_500));
      }
    }
    return {
      createsNone: median(runs.none),
      createsWebhooks: median(runs.webhooks),
      p50None: median(latency.none.map((l) => l.p50)),
      p99None: median(latency.none.map((l) => l.p99)),
      p50Webhooks: median(latency.webhooks.map((l) => l.p50)),
      p99Webhooks: median(latency.webhooks.map((l) => l.p99)),
    };
  } finally {
    await server.stop();
    await hook.shutdown();
  }
}

async function call(api: Api, method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(api.url + path, {
    method,
    client: api.client,
    headers: { ...api.headers, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}
