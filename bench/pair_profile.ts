/**
 * Where a feature costs a request, by function: two servers on the file store in this one
 * process, one with the feature (metrics, as bench/metrics.ts pairs them; an audit level, batch
 * log; tracing, every request, to an OTLP receiver in a process of its own; or bench/admission.ts's
 * ValidatingAdmissionPolicy of three validations and its binding) and one without,
 * each under 32 wrk clients (configmap GETs, or creates) in alternating rounds, with V8's CPU
 * profiler on during each round. Prints, per function, the request thread's self time per
 * request with the feature and without and the difference, largest first: a difference of 0.1
 * µs shows here, where the servers' requests/s vary by 10 % between rounds.
 *
 *   deno run -A bench/pair_profile.ts [--feature=metrics|Metadata|RequestResponse|tracing|policy]
 *     [--creates] [--rounds=4] [--top=25]
 *
 * Not part of `deno task bench`: an instrument for looking at what a feature costs. A function
 * that V8 inlines into another is counted in that one, so the same work can move between names
 * (compare the sums as well as the rows).
 */

import { Session } from "node:inspector";
import { createLogger } from "../lib/api/mod.ts";
import { startServer } from "../lib/server/server.ts";
import { POLICY_OBJECTS } from "./admission.ts";
import { type Api, apiFor } from "./harness.ts";
import { wrk } from "./wrk.ts";

const option = (name: string, fallback: number) =>
  Number(Deno.args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const ROUNDS = option("rounds", 4);
const FEATURE = Deno.args.find((a) => a.startsWith("--feature="))?.split("=")[1] ?? "metrics";
const CREATES = Deno.args.includes("--creates");
if (!["metrics", "Metadata", "RequestResponse", "tracing", "policy"].includes(FEATURE)) {
  console.error(`--feature: metrics, Metadata, RequestResponse, tracing or policy, not ${FEATURE}`);
  Deno.exit(2);
}
const TOP = option("top", 25);
const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";
const WHAT = Deno.args.includes("--creates") ? "creates" : "GETs";

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

const session = new Session();
session.connect();
const post = <T>(method: string, params: object = {}) =>
  new Promise<T>((resolve, reject) =>
    session.post(method, params, (err, res) => err ? reject(err) : resolve(res as T))
  );

/** µs of self time per function name, summed over a profile. */
function selfTimes(profile: CpuProfile, into: Map<string, number>): void {
  const names = new Map<number, string>();
  for (const n of profile.nodes) {
    const f = n.callFrame;
    const where = f.url.split("/").slice(-2).join("/");
    names.set(n.id, `${f.functionName || "(anonymous)"} ${where}:${f.lineNumber + 1}`);
  }
  profile.samples.forEach((id, i) => {
    const name = names.get(id)!;
    into.set(name, (into.get(name) ?? 0) + profile.timeDeltas[i]);
  });
}

const dir = await Deno.makeTempDir({ prefix: "pair-profile-" });
const logger = createLogger("warn");
const audited = FEATURE === "Metadata" || FEATURE === "RequestResponse";
const tracing = FEATURE === "tracing";
// The receiver runs in a process of its own, so that its work is not in the profile.
const receiver = tracing ? await startReceiver() : undefined;
if (receiver) {
  await Deno.writeTextFile(
    `${dir}/tracing.yaml`,
    "apiVersion: apiserver.platform.io/v1beta1\nkind: TracingConfiguration\n" +
      `endpoint: ${receiver.endpoint}\nsamplingRatePerMillion: 1000000\n`,
  );
}
await Deno.writeTextFile(
  `${dir}/policy.yaml`,
  `apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n  - level: ${FEATURE}\n`,
);
const audit = {
  policyFile: `${dir}/policy.yaml`,
  logPath: `${dir}/audit.log`,
  logMode: "batch" as const,
};
const servers = {
  on: await startServer({
    dataDir: `${dir}/on`,
    logger,
    audit: audited ? audit : undefined,
    tracingConfigFile: tracing ? `${dir}/tracing.yaml` : undefined,
  }),
  off: await startServer({ dataDir: `${dir}/off`, logger, metrics: FEATURE !== "metrics" }),
};
try {
  const paths = Array.from({ length: 100 }, (_, i) => `${CONFIGMAPS}/p-${i}`);
  const apis: Record<string, Api> = {};
  for (const [mode, server] of Object.entries(servers)) {
    const api = await apiFor({ url: server.url, dataDir: `${dir}/${mode}` } as never, true);
    apis[mode] = api;
    if (FEATURE === "policy" && mode === "on") {
      for (const [path, obj] of POLICY_OBJECTS) {
        const res = await fetch(`${api.url}${path}`, {
          method: "POST",
          client: api.client,
          headers: { ...api.headers, "Content-Type": "application/json" },
          body: JSON.stringify(obj),
        });
        if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      }
    }
    for (let i = 0; i < paths.length; i++) {
      const res = await fetch(`${api.url}${CONFIGMAPS}`, {
        method: "POST",
        client: api.client,
        headers: { ...api.headers, "Content-Type": "application/json" },
        body: JSON.stringify({ metadata: { name: `p-${i}` }, data: { a: "1" } }),
      });
      await res.body?.cancel();
    }
  }
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 100 });
  const times = { on: new Map<string, number>(), off: new Map<string, number>() };
  const served = { on: 0, off: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 ? ["off", "on"] as const : ["on", "off"] as const) {
      const spec = CREATES
        ? {
          method: "POST" as const,
          paths: [CONFIGMAPS],
          headers: { ...apis[mode].headers, "Content-Type": "application/json" },
          body: JSON.stringify({ metadata: { generateName: "bench-" }, data: { a: "1", b: "2" } }),
        }
        : { method: "GET" as const, paths, headers: apis[mode].headers };
      await wrk(apis[mode].url, spec, 32, 1_000); // warm-up, unprofiled
      await post("Profiler.start");
      const r = await wrk(apis[mode].url, spec, 32, 5_000);
      const { profile } = await post<{ profile: CpuProfile }>("Profiler.stop");
      selfTimes(profile, times[mode]);
      served[mode] += r.requests;
      console.error(`round ${round + 1}, ${FEATURE} ${mode}: ${Math.round(r.perSec)} ${WHAT}/s`);
    }
  }
  const names = () => new Set([...times.on.keys(), ...times.off.keys()]);
  const perGet = (mode: "on" | "off", name: string) => (times[mode].get(name) ?? 0) / served[mode];
  const busy = (mode: "on" | "off") =>
    [...times[mode].keys()].filter((n) => !n.startsWith("(idle)"))
      .reduce((sum, n) => sum + perGet(mode, n), 0);
  console.log(
    `request thread, µs per request: ${FEATURE} on ${busy("on").toFixed(2)}, off ` +
      `${busy("off").toFixed(2)}, difference ${(busy("on") - busy("off")).toFixed(2)}`,
  );
  // The feature's own code, and the clock reads the server makes beyond those without it.
  const own = audited
    ? /(audit\/|filters\/audit\.ts)/
    : FEATURE === "policy"
    ? /(admission\/|cel\/)/
    : tracing
    ? /(tracing\/|filters\/tracing\.ts|traced_store\.ts)/
    : /(metrics\/|filters\/metrics\.ts|instrumented\.ts|instrumented_authorizer\.ts)/;
  const clock = /^(op_now|now) /;
  const named = [...names()].reduce(
    (sum, n) =>
      sum +
      (own.test(n) ? perGet("on", n) : clock.test(n) ? perGet("on", n) - perGet("off", n) : 0),
    0,
  );
  console.log(`in ${FEATURE}'s own functions and clock reads: ${named.toFixed(2)} µs per request`);
  console.log("    on    off   diff  function");
  const rows = [...names()].filter((n) => !n.startsWith("(idle)"))
    .map((n) => ({ n, on: perGet("on", n), off: perGet("off", n) }))
    .sort((a, b) => (b.on - b.off) - (a.on - a.off))
    .slice(0, TOP);
  for (const { n, on, off } of rows) {
    const cell = (v: number) => v.toFixed(2).padStart(6);
    console.log(`${cell(on)} ${cell(off)} ${cell(on - off)}  ${n}`);
  }
} finally {
  await post("Profiler.disable").catch(() => {});
  session.disconnect();
  await Promise.all([servers.on.close(), servers.off.close()]);
  receiver?.process.kill();
  await receiver?.process.status;
  await Deno.remove(dir, { recursive: true });
}

/** An OTLP/gRPC receiver (tests/otlp_receiver.ts, not decoding) in a process of its own. */
async function startReceiver(): Promise<{ endpoint: string; process: Deno.ChildProcess }> {
  const module = new URL("../tests/otlp_receiver.ts", import.meta.url).href;
  const script = `const { otlpReceiver } = await import(${JSON.stringify(module)});\n` +
    "const r = await otlpReceiver({ keep: false, decode: false });\n" +
    "console.log(r.endpoint);\nawait new Promise(() => {});\n";
  const process = new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const line = (await reader.read()).value ?? "";
  reader.releaseLock();
  return { endpoint: line.trim(), process };
}
