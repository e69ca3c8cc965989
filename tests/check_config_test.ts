/**
 * `platform check-config FILE… [--print-defaults]` as a user runs it: valid files of the
 * kinds of spec 03 and of the server's own kinds exit 0, `--print-defaults` prints the
 * defaulted objects, invalid files print kube's field errors and exit 1, and a missing file,
 * malformed YAML or an unknown kind is one line without a stack trace. Usage errors exit 2.
 */

import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { type PlatformRun, runPlatform } from "./harness.ts";

async function files(
  contents: Record<string, string>,
): Promise<{ dir: string; path(name: string): string }> {
  const dir = await Deno.makeTempDir({ prefix: "check-config-" });
  for (const [name, text] of Object.entries(contents)) {
    await Deno.writeTextFile(join(dir, name), text);
  }
  return { dir, path: (name) => join(dir, name) };
}

/** stderr as lines, none of which is a stack frame. */
function errorLines(run: PlatformRun): string[] {
  const lines = run.stderr.trimEnd().split("\n").filter((l) => l !== "");
  for (const line of lines) {
    assertEquals(/\bat .*:\d+:\d+/.test(line), false, `a stack frame: ${line}`);
  }
  return lines;
}

const SCHEDULER = `apiVersion: scheduler.config.platform.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
  - schedulerName: batch
    plugins:
      multiPoint:
        disabled:
          - name: PodTopologySpread
    pluginConfig:
      - name: DefaultPreemption
        args:
          minCandidateNodesAbsolute: 10
extenders:
  - urlPrefix: https://extender.example.com/scheduler
    filterVerb: filter
    prioritizeVerb: prioritize
    weight: 2
    httpTimeout: 30s
`;

const KCM = `apiVersion: kubecontrollermanager.config.k8s.io/v1alpha1
kind: KubeControllerManagerConfiguration
generic:
  controllers: ["*", "-csrsigning"]
  leaderElection:
    leaseDuration: 30s
csrSigningController:
  clusterSigningDuration: 720h
`;

const MULTI = `apiVersion: controllermanager.config.k8s.io/v1
kind: LeaderMigrationConfiguration
leaderName: cloud-provider-extraction-migration
controllerLeaders:
  - name: route
    component: "*"
---
apiVersion: apiserver.config.k8s.io/v1
kind: TracingConfiguration
endpoint: localhost:4317
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: ipvs
`;

const INVALID = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 0
leaderElection:
  leaseDuration: -1s
podInitialBackoffSeconds: 5
podMaxBackoffSeconds: 2
`;

const INVALID_MULTI = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
iptables:
  masqueradeBit: 40
---
apiVersion: apiserver.config.k8s.io/v1
kind: TracingConfiguration
samplingRatePerMillion: 2000000
`;

Deno.test("check-config: valid files of every family exit 0", async () => {
  const f = await files({ "sched.yaml": SCHEDULER, "kcm.yaml": KCM, "multi.yaml": MULTI });
  const run = await runPlatform(
    "check-config",
    f.path("sched.yaml"),
    f.path("kcm.yaml"),
    f.path("multi.yaml"),
  );
  assertEquals(run.code, 0, run.stderr);
  assertEquals(run.stdout.trimEnd().split("\n"), [
    `${f.path("sched.yaml")}: valid (KubeSchedulerConfiguration)`,
    `${f.path("kcm.yaml")}: valid (KubeControllerManagerConfiguration)`,
    `${
      f.path("multi.yaml")
    }: valid (LeaderMigrationConfiguration, TracingConfiguration, KubeProxyConfiguration)`,
  ]);
  // No copy of a document is left beside the file.
  assertEquals([...Deno.readDirSync(f.dir)].length, 3);
  await Deno.remove(f.dir, { recursive: true });
});

Deno.test("check-config --print-defaults prints the defaulted objects as YAML", async () => {
  const f = await files({ "sched.yaml": SCHEDULER, "multi.yaml": MULTI });
  const run = await runPlatform(
    "check-config",
    "--print-defaults",
    f.path("sched.yaml"),
    f.path("multi.yaml"),
  );
  assertEquals(run.code, 0, run.stderr);
  // deno-lint-ignore no-explicit-any
  const docs = parseAllDocuments(run.stdout) as any[];
  const [sched, migration, tracing, proxy] = docs.map((d) => d.toJS());
  assertEquals(docs.length, 4);
  assertEquals(sched.parallelism, 16);
  assertEquals(sched.podMaxBackoffSeconds, 10);
  assertEquals(sched.leaderElection.leaseDuration, "15s");
  assertEquals(sched.profiles[1].schedulerName, "batch");
  // deno-lint-ignore no-explicit-any
  const names = sched.profiles[1].plugins.multiPoint.enabled.map((p: any) => p.name);
  assertEquals(names.includes("PodTopologySpread"), false);
  assertEquals(names.includes("DefaultBinder"), true);
  assertEquals(sched.profiles[1].pluginConfig[0].args, {
    apiVersion: "scheduler.config.platform.io/v1",
    kind: "DefaultPreemptionArgs",
    minCandidateNodesPercentage: 10,
    minCandidateNodesAbsolute: 10,
  });
  assertEquals(sched.extenders[0].httpTimeout, "30s");
  assertEquals(migration.resourceLock, "leases");
  // A server kind prints as written: the server applies its defaults as it starts.
  assertEquals(tracing, {
    apiVersion: "apiserver.config.k8s.io/v1",
    kind: "TracingConfiguration",
    endpoint: "localhost:4317",
  });
  assertEquals(proxy.iptables.syncPeriod, "30s");
  assertEquals(proxy.ipvs.syncPeriod, "30s");
  await Deno.remove(f.dir, { recursive: true });
});

Deno.test("check-config: invalid files print kube's field errors and exit 1", async () => {
  const f = await files({ "bad.yaml": INVALID, "multi.yaml": INVALID_MULTI, "ok.yaml": KCM });
  const run = await runPlatform(
    "check-config",
    f.path("bad.yaml"),
    f.path("multi.yaml"),
    f.path("ok.yaml"),
  );
  assertEquals(run.code, 1);
  assertEquals(errorLines(run), [
    `${
      f.path("bad.yaml")
    }: leaderElection.leaseDuration: Invalid value: "-1s": must be greater than zero`,
    // kube shows the renew deadline here.
    `${
      f.path("bad.yaml")
    }: leaderElection.leaseDuration: Invalid value: "10s": must be greater than \`RenewDeadline\``,
    `${
      f.path("bad.yaml")
    }: parallelism: Invalid value: 0: should be an integer value greater than zero`,
    `${
      f.path("bad.yaml")
    }: podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds`,
    `${
      f.path("multi.yaml")
    } (document 1): iptables.masqueradeBit: Invalid value: 40: must be within the range [0, 31]`,
    `${
      f.path("multi.yaml")
    } (document 2): samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million`,
  ]);
  // The valid one is still reported.
  assertEquals(
    run.stdout.trim(),
    `${f.path("ok.yaml")}: valid (KubeControllerManagerConfiguration)`,
  );
  await Deno.remove(f.dir, { recursive: true });
});

Deno.test("check-config: an unknown kind, a missing file, malformed YAML: one line each, exit 1", async () => {
  const f = await files({
    "foo.yaml": "apiVersion: example.com/v1\nkind: Foo\n",
    "nokind.yaml": "apiVersion: kubescheduler.config.k8s.io/v1\n",
    "broken.yaml": "apiVersion: v1\nkind: [\n",
    "numeric.yaml": "apiVersion: v1\nkind: 5\n",
    "version.yaml":
      "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
  });
  const runs = await Promise.all(
    ["foo.yaml", "nokind.yaml", "broken.yaml", "version.yaml", "none.yaml", "numeric.yaml"].map((
      name,
    ) => runPlatform("check-config", f.path(name))),
  );
  const [foo, nokind, broken, version, missing, numeric] = runs;
  for (const run of runs) {
    assertEquals(run.code, 1, run.stderr);
    assertEquals(errorLines(run).length, 1, run.stderr);
  }
  assertMatch(
    foo.stderr,
    /foo\.yaml: kind: Unsupported value: "Foo": supported values: "KubeControllerManagerConfiguration", .*"Policy", "Configuration", "WebhookAdmissionConfiguration"\n$/,
  );
  assertEquals(nokind.stderr, `${f.path("nokind.yaml")}: kind: Required value\n`);
  assertMatch(broken.stderr, /^.*broken\.yaml:\d+:\d+: invalid YAML: /);
  assertEquals(
    version.stderr,
    `${
      f.path("version.yaml")
    }: apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": supported values: "scheduler.config.platform.io/v1", "kubescheduler.config.k8s.io/v1"\n`,
  );
  assertEquals(
    numeric.stderr,
    `${f.path("numeric.yaml")}: kind: Invalid value: 5: must be a string\n`,
  );
  assertEquals(missing.stderr, `${f.path("none.yaml")}: cannot read: No such file or directory\n`);
  await Deno.remove(f.dir, { recursive: true });
});

Deno.test("check-config: the server's own kinds go to the server's loaders", async () => {
  const f = await files({
    "authz.yaml":
      "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers: []\n",
    "policy.yaml": "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n",
    "server.yaml":
      "apiVersion: platform.io/v1alpha1\nkind: ServerConfiguration\nsecurePort: 99999\n",
    "erl.yaml": "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\n" +
      "limits:\n  - type: Server\n    qps: -1\n    burst: 10\n",
  });
  const [authz, policy, server, erl] = await Promise.all(
    ["authz.yaml", "policy.yaml", "server.yaml", "erl.yaml"].map((n) =>
      runPlatform("check-config", f.path(n))
    ),
  );
  // An admission plugin's own file, read as an AdmissionConfiguration naming it reads it.
  assertEquals(erl.code, 1);
  assertEquals(
    erl.stderr,
    `${f.path("erl.yaml")}: limits[0].qps: Invalid value: -1: must be positive\n`,
  );
  assertEquals(authz.code, 1);
  assertEquals(errorLines(authz).length, 1);
  assertMatch(authz.stderr, /authz\.yaml: authorizers/);
  assertEquals(policy.code, 0, policy.stderr);
  assertEquals(policy.stdout.trim(), `${f.path("policy.yaml")}: valid (Policy)`);
  assertEquals(server.code, 1);
  assertEquals(errorLines(server).length, 1);
  assertMatch(server.stderr, /server\.yaml: securePort/);
  await Deno.remove(f.dir, { recursive: true });
});

Deno.test("check-config: usage errors exit 2; flags alone still check the server's flags", async () => {
  const [none, flag, help, flags] = await Promise.all([
    runPlatform("check-config", "--print-defaults"),
    runPlatform("check-config", "x.yaml", "--secure-port", "1"),
    runPlatform("check-config", "x.yaml", "--help"),
    runPlatform("check-config", "--secure-port", "7443", "--storage", "memory"),
  ]);
  assertEquals(none.code, 2);
  assertMatch(none.stderr, /^platform check-config: no file given/);
  assertEquals(flag.code, 2);
  assertMatch(flag.stderr, /^platform check-config: unknown flag "--secure-port"/);
  assertEquals(help.code, 0);
  assertMatch(help.stdout, /Usage: platform check-config FILE\.\.\. \[--print-defaults\]/);
  assertEquals(flags.code, 0, flags.stderr);
  assert(flags.stdout.includes("configuration is valid"));
});
