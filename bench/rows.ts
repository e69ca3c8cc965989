/**
 * The figures that compare servers started for them (bench/auth.ts, limits.ts, encryption.ts,
 * admission.ts, workers.ts, etcd.ts, crd_versions.ts, crd_rules.ts; audit, metrics and tracing
 * in rows_operate.ts), as rows of the bench's table; `deno task bench` runs some of them,
 * `--only=<name>` one.
 */

import { fileURLToPath } from "node:url";
import { admissionFigures } from "./admission.ts";
import { authFigures, type AuthServer } from "./auth.ts";
import { crdRulesFigures } from "./crd_rules.ts";
import { crdVersionsFigures } from "./crd_versions.ts";
import { encryptionFigures } from "./encryption.ts";
import { etcdFigures } from "./etcd.ts";
import { limitsFigures } from "./limits.ts";
import { workersFigures } from "./workers.ts";
import {
  type Api,
  apiFor,
  type Child,
  fmt,
  type Row,
  serverPairOptions,
  spawnServer,
  stopServer,
} from "./harness.ts";

/** The hello-world server (bench/hello_world.ts). */
const HELLO = fileURLToPath(new URL("./hello_world.ts", import.meta.url));
/** The thinnest HTTPS server on etcd (bench/etcd_relay.ts). */
const RELAY = fileURLToPath(new URL("./etcd_relay.ts", import.meta.url));

/** One of the bench's own scripts (`args`: the script, then its arguments), started in
 * `dataDir`, which it keeps its certificates in; `stop` sends SIGTERM. */
export async function spawnBenchScript(
  args: string[],
  dataDir: string,
  label: string,
  track: (c: Child) => Child,
): Promise<{ child: Child; stop: () => Promise<void> }> {
  await Deno.mkdir(dataDir, { recursive: true });
  const child = track(await spawnServer(args, dataDir));
  return { child, stop: async () => void await stopServer(child, "SIGTERM", label) };
}

/** One of the bench's own servers ({@link spawnBenchScript}), called without a token. */
async function benchScript(
  args: string[],
  dataDir: string,
  label: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
): Promise<AuthServer> {
  const { child, stop } = await spawnBenchScript(args, dataDir, label, track);
  return { api: trackApi(await apiFor(child, false)), stop };
}

/** RBAC vs AlwaysAllow and JWT vs static token (bench/auth.ts), as table rows. */
export async function authRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const auth = await authFigures(serverPairOptions(`${tmp}/auth`, "auth server", track, trackApi));
  problems.push(...auth.problems);
  const ok = auth.problems.length === 0;
  const rbacCost = 1 - auth.rbacPerSec / auth.allowPerSec;
  const jwtMicros = (1 / auth.jwtPerSec - 1 / auth.staticPerSec) * 1e6;
  return [
    {
      figure: "GETs/s, 32 clients, RBAC (user bound to view, 500 other bindings)",
      value: fmt(auth.rbacPerSec),
      baseline: `AlwaysAllow ${fmt(auth.allowPerSec)}`,
      ratio: `${fmt((auth.rbacPerSec / auth.allowPerSec) * 100)} % (cost ${
        fmt(rbacCost * 100, 1)
      } %)`,
      target: "cost ≤ 10 %",
      met: ok ? (rbacCost <= 0.1 ? "yes" : "**no**") : "**no**",
    },
    {
      figure: "GETs/s, 32 clients, RBAC, JWT bearer (warm keys)",
      value: fmt(auth.jwtPerSec),
      baseline: `static token ${fmt(auth.staticPerSec)}`,
      ratio: `${fmt((auth.jwtPerSec / auth.staticPerSec) * 100)} % (+${fmt(jwtMicros)} µs/req)`,
      target: "—",
      met: "—",
    },
    {
      figure: "JWT authentication in process, warm keys, µs",
      value: fmt(auth.jwtMicros, 1),
      baseline: `static token ${fmt(auth.staticMicros, 2)}`,
      ratio: `${fmt(auth.jwtMicros / auth.staticMicros)}×`,
      target: "—",
      met: "—",
    },
  ];
}

/** The rows of the request-limit figures (bench/limits.ts). */
export async function limitsRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const f = await limitsFigures(
    serverPairOptions(`${tmp}/limits`, "limits server", track, trackApi),
  );
  problems.push(...f.problems);
  const row = (figure: string, value: number, baseline: number): Row => ({
    figure,
    value: fmt(value),
    baseline: `limits off ${fmt(baseline)}`,
    ratio: `${fmt(value / baseline, 2)}×`,
    target: "—",
    met: "—",
  });
  return [
    row("GETs/s, 32 clients, in-flight limits on", f.getsLimited, f.getsUnlimited),
    row("durable creates/s, 32 clients, in-flight limits on", f.createsLimited, f.createsUnlimited),
  ];
}

/** Secrets with aesgcm vs identity (bench/encryption.ts), as table rows. */
export async function encryptionRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const enc = await encryptionFigures(
    serverPairOptions(`${tmp}/encryption`, "encryption server", track, trackApi),
  );
  problems.push(...enc.problems);
  const ok = enc.problems.length === 0;
  const row = (figure: string, value: number, baseline: number): Row => ({
    figure,
    value: fmt(value),
    baseline: `identity ${fmt(baseline)}`,
    ratio: fmt(value / baseline, 2),
    target: "≥ 0.8",
    met: ok && value / baseline >= 0.8 ? "yes" : "**no**",
  });
  return [
    row("Secret creates/s, 32 clients, aesgcm at rest", enc.createsAesgcm, enc.createsIdentity),
    row("Secret gets/s, 32 clients, aesgcm at rest", enc.getsAesgcm, enc.getsIdentity),
    {
      figure: "aesgcm encryption of one stored Secret (~400 B) in process, µs",
      value: fmt(enc.encryptMicros, 1),
      baseline: `decryption ${fmt(enc.decryptMicros, 1)}`,
      ratio: "—",
      target: "—",
      met: "—",
    },
  ];
}

/** Creates with webhooks and with a policy vs none (bench/admission.ts), as table rows. */
export async function admissionRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const adm = await admissionFigures(
    serverPairOptions(`${tmp}/admission`, "admission server", track, trackApi),
  );
  problems.push(...adm.problems);
  const ok = adm.problems.length === 0;
  const { values, ratios } = adm.policy;
  const webhooks = adm.createsWebhooks / adm.createsNone;
  return [
    {
      figure: "configmap creates/s, 32 clients, 1 mutating + 1 validating webhook",
      value: fmt(adm.createsWebhooks),
      baseline: `none ${fmt(adm.createsNone)}`,
      ratio: fmt(webhooks, 2),
      target: "≥ 0.5",
      met: ok && webhooks >= 0.5 ? "yes" : "**no**",
    },
    {
      figure: "configmap creates/s, 32 clients, 1 ValidatingAdmissionPolicy (3 validations)",
      value: fmt(values.creates.policy),
      baseline: `none ${fmt(values.creates.none)}`,
      ratio: `${fmt(ratios.creates, 2)} (rounds' median)`,
      target: "≥ 0.85",
      met: ok && ratios.creates >= 0.85 ? "yes" : "**no**",
    },
    {
      figure: "server CPU per create, µs, 1 ValidatingAdmissionPolicy (3 validations)",
      value: fmt(values.createCpuMicros.policy, 1),
      baseline: `none ${fmt(values.createCpuMicros.none, 1)}`,
      ratio: `${fmt(ratios.createCpu, 2)} (none ÷ policy, rounds' median)`,
      target: "≥ 0.85",
      met: ok && ratios.createCpu >= 0.85 ? "yes" : "**no**",
    },
    {
      figure: "create latency added by the two webhook round trips, 1 client, p50 / p99 ms",
      value: `${fmt(adm.p50Webhooks - adm.p50None, 2)} / ${fmt(adm.p99Webhooks - adm.p99None, 2)}`,
      baseline: `none ${fmt(adm.p50None, 2)} / ${fmt(adm.p99None, 2)}`,
      ratio: "—",
      target: "—",
      met: "—",
    },
  ];
}

/** `--workers=N` for N = 1, 2, 4 against N = 1 and against a hello-world with as many threads,
 * the scaling curve, 1,000 watchers' lag at N = 2 against N = 1, and N = 2's creates against
 * etcd's puts (bench/workers.ts), as table rows. */
export async function workersRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const dir = `${tmp}/workers`;
  const w = await workersFigures({
    ...serverPairOptions(dir, "workers server", track, trackApi),
    startHello: (dataDir, threads) =>
      benchScript(
        [HELLO, dataDir, String(threads)],
        dataDir,
        "hello-world server",
        track,
        trackApi,
      ),
  });
  problems.push(...w.problems);
  const ok = w.problems.length === 0;
  const rows: Row[] = [];
  for (const n of w.counts) {
    const scale = (figure: string, values: Record<number, number>, target?: number): Row => ({
      figure,
      value: fmt(values[n]),
      baseline: `${values === w.hello ? "1 thread" : "--workers=1"} ${fmt(values[1])}`,
      ratio: fmt(values[n] / values[1], 2),
      target: target ? `≥ ${target}` : "—",
      met: target ? (ok && values[n] / values[1] >= target ? "yes" : "**no**") : "—",
    });
    rows.push(
      scale(
        `configmap creates/s, 32 clients, --workers=${n}`,
        w.creates,
        n === 2 ? 1.6 : undefined,
      ),
      scale(`configmap gets/s, 32 clients, --workers=${n}`, w.gets, n === 2 ? 1.6 : undefined),
      // What the machine gives more threads now: on a shared machine, the ceiling of the
      // ratios above.
      scale(`hello-world req/s, 32 clients, ${n} threads`, w.hello),
      {
        figure: `configmap gets/s, --workers=${n}, against a hello-world on ${n} threads`,
        value: fmt(w.gets[n]),
        baseline: `hello-world ${fmt(w.hello[n])}`,
        ratio: `${fmt((w.gets[n] / w.hello[n]) * 100)} %`,
        target: "≥ 50 %",
        met: ok && w.gets[n] >= 0.5 * w.hello[n] ? "yes" : "**no**",
      },
    );
  }
  // The scaling curve: each figure at N = 1, 2, 4 and as multiples of N = 1.
  const curve = (figure: string, values: Record<number, number>): Row => ({
    figure: `scaling, ${figure}, N = ${w.counts.join(" / ")}`,
    value: w.counts.map((n) => fmt(values[n])).join(" / "),
    baseline: "N = 1",
    ratio: w.counts.map((n) => fmt(values[n] / values[1], 2)).join(" / "),
    target: "—",
    met: "—",
  });
  rows.push(
    curve("configmap creates/s", w.creates),
    curve("configmap gets/s", w.gets),
    curve("hello-world req/s", w.hello),
  );
  const lagRatio = w.lagP99[2] / w.lagP99[1];
  rows.push({
    figure: "watch lag p99, 1,000 watchers, 200 writes/s, --workers=2, ms",
    value: fmt(w.lagP99[2], 1),
    baseline: `--workers=1 ${fmt(w.lagP99[1], 1)}`,
    ratio: fmt(lagRatio, 2),
    target: "≤ 0.5",
    met: ok && lagRatio <= 0.5 ? "yes" : "**no**",
  }, {
    figure: "watch lag p50, 1,000 watchers, 200 writes/s, --workers=2, ms",
    value: fmt(w.lagP50[2], 1),
    baseline: `--workers=1 ${fmt(w.lagP50[1], 1)}`,
    ratio: fmt(w.lagP50[2] / w.lagP50[1], 2),
    target: "—",
    met: "—",
  });
  const etcdRatio = w.etcdPuts === undefined ? NaN : w.creates[2] / w.etcdPuts;
  rows.push({
    figure: "durable configmap creates/s, 32 clients, --workers=2, against etcd 3.4 puts (wrk)",
    value: fmt(w.creates[2]),
    baseline: `etcd puts ${w.etcdPuts === undefined ? "n/a" : fmt(w.etcdPuts)}`,
    ratio: fmt(etcdRatio, 2),
    target: "≥ 2",
    met: ok && etcdRatio >= 2 ? "yes" : "**no**",
  });
  return rows;
}

/** The etcd3 backend against etcd itself and against the file store (bench/etcd.ts), as table
 * rows. */
export async function etcdRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const e = await etcdFigures({
    ...serverPairOptions(`${tmp}/etcd`, "etcd server", track, trackApi),
    startRelay: (dataDir, etcdUrl) =>
      benchScript([RELAY, dataDir, etcdUrl], dataDir, "etcd relay", track, trackApi),
  });
  problems.push(...e.problems);
  const ok = e.problems.length === 0;
  const row = (
    figure: string,
    value: string,
    baseline: string,
    ratio: number,
    target: string,
    met: boolean,
  ): Row => ({
    figure,
    value,
    baseline,
    ratio: fmt(ratio, 2),
    target,
    met: ok && met ? "yes" : "**no**",
  });
  /** A row for context: no target of its own. */
  const context = (figure: string, value: string, baseline: string, ratio: number) =>
    row(figure, value, baseline, ratio, "—", true);
  const createRatio = e.createsEtcd / e.etcdPutsPerSec;
  const getRatio = e.getsEtcd / e.getsFile;
  const listRatio = e.listEtcdMs / e.listFileMs;
  const lagRatio = e.lagThreeReplicasP99 / e.lagOneReplicaP99;
  return [
    row(
      "configmap creates/s, 32 clients, on etcd",
      fmt(e.createsEtcd),
      `etcd txns ${fmt(e.etcdPutsPerSec)}`,
      createRatio,
      "≥ 0.6",
      createRatio >= 0.6,
    ),
    row(
      "POSTs/s, 32 clients, to the thinnest HTTPS server on etcd (bench/etcd_relay.ts)",
      fmt(e.relayPerSec),
      `etcd txns ${fmt(e.etcdPutsPerSec)}`,
      e.relayPerSec / e.etcdPutsPerSec,
      "— (what this machine leaves a server)",
      true,
    ),
    context(
      "configmap creates/s, 32 clients, on etcd, against that relay",
      fmt(e.createsEtcd),
      `relay ${fmt(e.relayPerSec)}`,
      e.createsEtcd / e.relayPerSec,
    ),
    row(
      "configmap gets/s, 32 clients, on etcd, resourceVersion=0",
      fmt(e.getsEtcd),
      `file store ${fmt(e.getsFile)}`,
      getRatio,
      "≥ 0.83 (within 1.2×)",
      getRatio >= 1 / 1.2,
    ),
    context(
      "configmap creates/s, 32 clients, on etcd vs the file store",
      fmt(e.createsEtcd),
      `file store ${fmt(e.createsFile)}`,
      e.createsEtcd / e.createsFile,
    ),
    context(
      "configmap gets/s, 32 clients, on etcd, consistent (no resourceVersion)",
      fmt(e.getsEtcdConsistent),
      `file store ${fmt(e.getsFile)}`,
      e.getsEtcdConsistent / e.getsFile,
    ),
    row(
      "list of 10,000 configmaps on etcd, resourceVersion=0, ms (median)",
      fmt(e.listEtcdMs),
      `file store ${fmt(e.listFileMs)}`,
      listRatio,
      "≤ 1.2",
      listRatio <= 1.2,
    ),
    row(
      "watch lag p99, 1,000 watchers over 3 replicas, ms",
      fmt(e.lagThreeReplicasP99, 1),
      `1 replica ${fmt(e.lagOneReplicaP99, 1)}`,
      lagRatio,
      "≤ 2",
      lagRatio <= 2,
    ),
  ];
}

/** A non-storage CRD version against the storage version (bench/crd_versions.ts), as a row. */
export async function crdVersionsRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const f = await crdVersionsFigures(
    serverPairOptions(`${tmp}/crd-versions`, "crd versions server", track, trackApi),
  );
  problems.push(...f.problems);
  const ratio = f.converted / f.storage;
  return [{
    figure: "lists/s of 1,000 custom resources, 4 clients, in v1beta1 (None conversion)",
    value: fmt(f.converted, 1),
    baseline: `storage version v1 ${fmt(f.storage, 1)}`,
    ratio: fmt(ratio, 2),
    target: "≥ 0.8",
    met: f.problems.length === 0 && ratio >= 0.8 ? "yes" : "**no**",
  }];
}

/** Custom resource creates with five validation rules vs none (bench/crd_rules.ts), as a row. */
export async function crdRulesRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const r = await crdRulesFigures(
    serverPairOptions(`${tmp}/crd-rules`, "crd rules server", track, trackApi),
  );
  problems.push(...r.problems);
  const ratio = r.creates.rules / r.creates.none;
  const cpuRatio = r.cpuMicros.none / r.cpuMicros.rules;
  return [{
    figure: "custom resource creates/s, 32 clients, CRD with 5 validation rules",
    value: fmt(r.creates.rules),
    baseline: `no rules ${fmt(r.creates.none)}`,
    ratio: fmt(ratio, 2),
    target: "≥ 0.7",
    met: r.problems.length === 0 && ratio >= 0.7 ? "yes" : "**no**",
  }, {
    figure:
      "server CPU µs per custom resource create, 5 validation rules (ratio: no rules ÷ rules)",
    value: fmt(r.cpuMicros.rules),
    baseline: `no rules ${fmt(r.cpuMicros.none)}`,
    ratio: fmt(cpuRatio, 2),
    target: "≥ 0.7",
    met: r.problems.length === 0 && cpuRatio >= 0.7 ? "yes" : "**no**",
  }];
}
