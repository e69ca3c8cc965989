/** Loading, merging and resolving client configuration files, on real files. */

import { assert, assertEquals } from "../../tests/assert.ts";
import { KubeconfigError, loadKubeconfig, parseKubeconfig, resolveClientSettings } from "./mod.ts";

/** Fails unless `fn` rejects with a `type` whose message includes `text`. */
async function assertRejects(
  fn: () => Promise<unknown>,
  type: new (...a: never[]) => Error,
  text: string,
): Promise<void> {
  const err = await fn().then(() => undefined, (e) => e);
  assert(err instanceof type, `expected a ${type.name}, got ${err}`);
  assert((err as Error).message.includes(text), `"${(err as Error).message}" lacks "${text}"`);
}

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "platform-kubeconfig-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

const FIRST = `
apiVersion: v1
kind: Config
current-context: one
clusters:
- name: shared
  cluster: {server: "https://first.example:6443", certificate-authority: ca.pem}
users:
- name: alice
  user: {token: first-token}
contexts:
- name: one
  context: {cluster: shared, user: alice, namespace: team-a}
- name: both
  context: {cluster: shared, user: bob}
`;

const SECOND = `
current-context: two
clusters:
- name: shared
  cluster: {server: "https://second.example:6443"}
- name: other
  cluster: {server: "other.example:443", insecure-skip-tls-verify: true}
users:
- name: alice
  user: {token: second-token}
- name: bob
  user: {username: bob, password: secret}
contexts:
- name: two
  context: {cluster: other, user: bob}
`;

Deno.test("kubeconfig: the files of the list merge with the first file winning per name", async () => {
  await using dir = await tempDir();
  const first = `${dir.path}/a/config`;
  const second = `${dir.path}/b/config`;
  await Deno.mkdir(`${dir.path}/a`);
  await Deno.mkdir(`${dir.path}/b`);
  await Deno.writeTextFile(first, FIRST);
  await Deno.writeTextFile(second, SECOND);
  await Deno.writeTextFile(`${dir.path}/a/ca.pem`, "CA OF THE FIRST FILE\n");
  const config = await loadKubeconfig({
    envList: `${first}:${dir.path}/missing:${second}`,
    defaultPath: `${dir.path}/never-read`,
  });
  assertEquals(config.files.map((f) => f.path), [first, second]);
  assertEquals(config.currentContext, "one");
  assertEquals([...config.clusters.keys()], ["shared", "other"]);

  const current = await resolveClientSettings(config);
  assertEquals(current.server, "https://first.example:6443");
  assertEquals(current.token, "first-token");
  assertEquals(current.namespace, "team-a");
  // Relative to the directory of the file the cluster came from.
  assertEquals(current.caPem, "CA OF THE FIRST FILE\n");

  // A context of the first file using a user only the second file has.
  const both = await resolveClientSettings(config, { context: "both" });
  assertEquals([both.username, both.password, both.namespace], ["bob", "secret", "default"]);

  const two = await resolveClientSettings(config, { context: "two", namespace: "x" });
  assertEquals(two.server, "https://other.example:443");
  assertEquals(two.insecureSkipTlsVerify, true);
  assertEquals(two.namespace, "x");
});

Deno.test("kubeconfig: command-line values override the file's", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/config`, FIRST);
  await Deno.writeTextFile(`${dir.path}/ca.pem`, "CA\n");
  const config = await loadKubeconfig({ explicit: `${dir.path}/config` });
  const s = await resolveClientSettings(config, {
    server: "https://127.0.0.1:9443",
    token: "flag-token",
    impersonate: "carol",
    impersonateGroups: ["g1", "g2"],
    impersonateUid: "u-1",
  });
  assertEquals(s.server, "https://127.0.0.1:9443");
  assertEquals(s.token, "flag-token");
  assertEquals(s.impersonate, { user: "carol", groups: ["g1", "g2"], uid: "u-1", extra: {} });
  // --insecure-skip-tls-verify drops the file's CA.
  const insecure = await resolveClientSettings(config, { insecureSkipTlsVerify: true });
  assertEquals([insecure.insecureSkipTlsVerify, insecure.caPem], [true, undefined]);
  // The explicit --user and --cluster pick other entries.
  await assertRejects(
    () => resolveClientSettings(config, { user: "nobody" }),
    KubeconfigError,
    'user "nobody" not found',
  );
  await assertRejects(
    () => resolveClientSettings(config, { context: "nope" }),
    KubeconfigError,
    "context was not found for specified context: nope",
  );
});

Deno.test("kubeconfig: an explicit file must exist; a bad one is named with the problem", async () => {
  await using dir = await tempDir();
  await assertRejects(
    () => loadKubeconfig({ explicit: `${dir.path}/missing` }),
    KubeconfigError,
    `error loading config file "${dir.path}/missing": No such file or directory`,
  );
  await Deno.writeTextFile(`${dir.path}/bad`, "clusters: {a: 1}\n");
  await assertRejects(
    () => loadKubeconfig({ explicit: `${dir.path}/bad` }),
    KubeconfigError,
    `error loading config file "${dir.path}/bad": clusters: expected a list`,
  );
  await Deno.writeTextFile(`${dir.path}/yaml`, "clusters: [\n");
  await assertRejects(
    () => loadKubeconfig({ explicit: `${dir.path}/yaml` }),
    KubeconfigError,
    "invalid YAML at line",
  );
  // Nothing configured at all: the defaults file is missing, no server.
  const empty = await loadKubeconfig({ defaultPath: `${dir.path}/none` });
  assertEquals(empty.files, []);
  await assertRejects(() => resolveClientSettings(empty), KubeconfigError, "no server found");
});

Deno.test("kubeconfig: an exec block is checked and its relative command resolved", async () => {
  await using dir = await tempDir();
  const text = `
current-context: c
clusters: [{name: k, cluster: {server: "https://h:1"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/plugin
      args: [get-token]
      env: [{name: A, value: b}]
      interactiveMode: Never
      provideClusterInfo: true
`;
  await Deno.writeTextFile(`${dir.path}/config`, text);
  const s = await resolveClientSettings(await loadKubeconfig({ explicit: `${dir.path}/config` }));
  assertEquals(s.exec, {
    command: `${dir.path}/bin/plugin`,
    args: ["get-token"],
    env: [{ name: "A", value: "b" }],
    apiVersion: "client.authentication.k8s.io/v1",
    installHint: undefined,
    provideClusterInfo: true,
    interactiveMode: "Never",
  });
  const v1WithoutMode = parseKubeconfig(
    text.replace("      interactiveMode: Never\n", ""),
    `${dir.path}/config`,
  );
  await assertRejects(
    () =>
      resolveClientSettings({
        files: [v1WithoutMode],
        clusters: new Map(v1WithoutMode.clusters.map((e) => [e.name, e])),
        users: new Map(v1WithoutMode.users.map((e) => [e.name, e])),
        contexts: new Map(v1WithoutMode.contexts.map((e) => [e.name, e])),
        currentContext: "c",
      }),
    KubeconfigError,
    "users[0].user.exec.interactiveMode: required for client.authentication.k8s.io/v1",
  );
});
