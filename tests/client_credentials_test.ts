/**
 * The client's credentials and connection options against a real server: `--token`,
 * `--username`/`--password` (`--basic-auth-file`), client certificates, impersonation,
 * contexts of merged configuration files, ExecCredential plugins (a 401 re-run, a
 * certificate, a failure), TLS options, `--request-timeout`, `--match-server-version`,
 * `--warnings-as-errors`.
 */

import { join } from "node:path";
import { stringify as yaml } from "yaml";
import { assertEquals, assertMatch } from "./assert.ts";
import { issueClientCertificate } from "../lib/certificates/pki.ts";
import { CLIENT_VERSION, env, ours, platformPatch, tempDir } from "./client_harness.ts";

Deno.test("patch: --token, --username/--password, client certificates, --as/--as-group/--as-uid", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "tokens.csv"), "tok-dave,dave,dave-uid\n");
  await Deno.writeTextFile(join(dir.path, "passwords.csv"), 'pw-erin,erin,erin-uid,"staff"\n');
  await using t = await env({
    tokenAuthFile: join(dir.path, "tokens.csv"),
    basicAuthFile: join(dir.path, "passwords.csv"),
    clientCertAuth: true,
  });
  await t.configMap("default", "x", {});
  const forbidden = (user: string) =>
    `Error from server (Forbidden): configmaps "x" is forbidden: User "${user}" cannot get ` +
    `resource "configmaps" in API group "" in the namespace "default"\n`;
  const p = ["cm", "x", "-p", '{"data":{"a":"1"}}'];
  assertEquals((await t.patch([...p, "--token", "tok-dave"])).stderr, forbidden("dave"));
  assertEquals(
    (await t.patch([...p, "--username", "erin", "--password", "pw-erin"])).stderr,
    forbidden("erin"),
  );
  assertEquals(
    (await t.patch([...p, "--username", "erin", "--password", "wrong"])).stderr,
    "error: You must be logged in to the server (Unauthorized)\n",
  );
  const ca = {
    caCertPem: await Deno.readTextFile(join(t.e.server.dataDir, "pki", "ca.crt")),
    caKeyPem: await Deno.readTextFile(join(t.e.server.dataDir, "pki", "ca.key")),
  };
  const cert = await issueClientCertificate({ ...ca, user: "frank" });
  await Deno.writeTextFile(join(dir.path, "frank.crt"), cert.certPem);
  await Deno.writeTextFile(join(dir.path, "frank.key"), cert.keyPem);
  // The kubeconfig's user has a token; certificates of the flags are presented besides, and a
  // user with no token signs in with the certificate alone.
  await Deno.writeTextFile(
    join(dir.path, "cert.kubeconfig"),
    yaml({
      clusters: [{
        name: "c",
        cluster: {
          server: t.e.server.url,
          "certificate-authority": join(t.e.server.dataDir, "pki", "ca.crt"),
        },
      }],
      users: [{
        name: "frank",
        user: { "client-certificate": "frank.crt", "client-key": "frank.key" },
      }],
      contexts: [{ name: "c", context: { cluster: "c", user: "frank" } }],
      "current-context": "c",
    }),
  );
  assertEquals(
    (await ours([...p, "--platformconfig", join(dir.path, "cert.kubeconfig")])).stderr,
    forbidden("frank"),
  );
  assertEquals(
    (await ours([
      ...p,
      "--platformconfig",
      join(dir.path, "cert.kubeconfig"),
      "--user",
      "nobody-here",
    ])).stderr,
    'error: user "nobody-here" not found\n',
  );
  // Impersonation: a group bound to a role that may patch config maps.
  for (
    const [path, body] of [
      ["/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {
        metadata: { name: "cm-patch" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "patch"] }],
      }],
      ["/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
        metadata: { name: "cm-patch" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm-patch" },
        subjects: [{ kind: "Group", name: "patchers", apiGroup: "rbac.authorization.k8s.io" }],
      }],
    ] as const
  ) assertEquals((await t.api("POST", path, body)).status, 201);
  assertEquals((await t.patch([...p, "--as", "alice"])).stderr, forbidden("alice"));
  assertEquals(
    await t.patch([
      ...p,
      "--as",
      "alice",
      "--as-group",
      "staff",
      "--as-group",
      "patchers",
      "--as-uid",
      "a-1",
    ]),
    { code: 0, stdout: "configmap/x patched\n", stderr: "" },
  );
});

Deno.test("patch: contexts, clusters and users of merged configuration files", async () => {
  await using t = await env();
  await using dir = await tempDir();
  await t.configMap("default", "x", {});
  const admin = (await Deno.readTextFile(t.kc)).match(/token: (\S+)/)![1];
  const cluster = {
    server: t.e.server.url,
    "certificate-authority": join(t.e.server.dataDir, "pki", "ca.crt"),
  };
  // The first file's current context uses a wrong token; the second file has the admin.
  await Deno.writeTextFile(
    join(dir.path, "one"),
    yaml({
      "current-context": "wrong",
      clusters: [{ name: "here", cluster }],
      users: [{ name: "stale", user: { token: "stale" } }],
      contexts: [{ name: "wrong", context: { cluster: "here", user: "stale" } }],
    }),
  );
  await Deno.writeTextFile(
    join(dir.path, "two"),
    yaml({
      "current-context": "ignored",
      clusters: [{ name: "here", cluster: { server: "https://127.0.0.1:1" } }],
      users: [{ name: "admin", user: { token: admin } }],
      contexts: [{
        name: "right",
        context: { cluster: "here", user: "admin", namespace: "default" },
      }],
    }),
  );
  const p = ["cm", "x", "-p", '{"data":{"a":"1"}}'];
  const list = {
    PLATFORMCONFIG: `${join(dir.path, "one")}:${join(dir.path, "two")}`,
    HOME: dir.path,
  };
  assertEquals(
    (await platformPatch(p, list)).stderr,
    "error: You must be logged in to the server (Unauthorized)\n",
  );
  assertEquals(await platformPatch([...p, "--context", "right"], list), {
    code: 0,
    stdout: "configmap/x patched\n",
    stderr: "",
  });
  assertEquals(
    (await platformPatch([...p, "--user", "admin"], list)).stdout,
    "configmap/x patched (no change)\n",
  );
  // $HOME/.platform/config when nothing else is given.
  await Deno.mkdir(join(dir.path, ".platform"));
  await Deno.copyFile(t.kc, join(dir.path, ".platform", "config"));
  assertEquals(
    (await platformPatch(p, { HOME: dir.path })).stdout,
    "configmap/x patched (no change)\n",
  );
  // A malformed file: one line, no stack.
  await Deno.writeTextFile(join(dir.path, "bad"), "clusters: [\n");
  const bad = await platformPatch([...p, "--platformconfig", join(dir.path, "bad")]);
  assertEquals(bad.code, 1);
  assertMatch(
    bad.stderr,
    /^error: error loading config file ".*bad": invalid YAML at line \d+, column \d+\n$/,
  );
});

Deno.test("patch: exec plugins: a token re-run after a 401, a certificate, a failing plugin", async () => {
  await using t = await env({ clientCertAuth: true });
  await using dir = await tempDir();
  await t.configMap("default", "x", {});
  const admin = (await Deno.readTextFile(t.kc)).match(/token: (\S+)/)![1];
  const ca = {
    caCertPem: await Deno.readTextFile(join(t.e.server.dataDir, "pki", "ca.crt")),
    caKeyPem: await Deno.readTextFile(join(t.e.server.dataDir, "pki", "ca.key")),
  };
  const kubeconfig = async (name: string, exec: unknown) => {
    const path = join(dir.path, name);
    await Deno.writeTextFile(
      path,
      yaml({
        "current-context": "c",
        clusters: [{
          name: "c",
          cluster: {
            server: t.e.server.url,
            "certificate-authority": join(t.e.server.dataDir, "pki", "ca.crt"),
          },
        }],
        users: [{ name: "u", user: { exec } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      }),
    );
    return path;
  };
  const script = async (name: string, body: string) => {
    const path = join(dir.path, name);
    await Deno.writeTextFile(path, `#!/bin/bash\necho run >> "${path}.runs"\n${body}\n`);
    await Deno.chmod(path, 0o755);
    return path;
  };
  const credential = (status: unknown) =>
    JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status,
    });
  // First run: a token the server refuses; second: the admin's.
  const token = await script(
    "token.sh",
    `if [ "$(wc -l < "$0.runs")" = 1 ]; then echo '${credential({ token: "stale" })}'; ` +
      `else echo '${credential({ token: admin })}'; fi`,
  );
  const p = ["cm", "x", "-p", '{"data":{"a":"1"}}'];
  const tokenConfig = await kubeconfig("token", {
    apiVersion: "client.authentication.k8s.io/v1",
    command: "./token.sh",
    interactiveMode: "Never",
  });
  assertEquals(await ours([...p, "--platformconfig", tokenConfig]), {
    code: 0,
    stdout: "configmap/x patched\n",
    stderr: "",
  });
  assertEquals((await Deno.readTextFile(`${token}.runs`)).trim().split("\n").length, 2);

  const cert = await issueClientCertificate({ ...ca, user: "grace" });
  await script(
    "cert.sh",
    `echo '${credential({ clientCertificateData: cert.certPem, clientKeyData: cert.keyPem })}'`,
  );
  // Our spelling in the configuration, kube's in the plugin's answer: the same version.
  const certConfig = await kubeconfig("cert", {
    apiVersion: "client.authentication.platform.io/v1",
    command: "./cert.sh",
    interactiveMode: "IfAvailable",
  });
  assertEquals(
    (await ours([...p, "--platformconfig", certConfig])).stderr,
    `Error from server (Forbidden): configmaps "x" is forbidden: User "grace" cannot get ` +
      `resource "configmaps" in API group "" in the namespace "default"\n`,
  );

  const failing = await script("fail.sh", "echo 'token expired, run: login' >&2; exit 2");
  const failConfig = await kubeconfig("fail", {
    apiVersion: "client.authentication.platform.io/v1",
    command: failing,
    interactiveMode: "Never",
  });
  assertEquals(await ours([...p, "--platformconfig", failConfig]), {
    code: 1,
    stdout: "",
    stderr: `error: getting credentials: exec: executable ${failing} failed with exit code 2; ` +
      "stderr: token expired, run: login\n",
  });
});

Deno.test("patch: TLS options, --request-timeout, --match-server-version, --warnings-as-errors", async () => {
  await using t = await env();
  await using dir = await tempDir();
  await t.configMap("default", "x", {});
  const admin = (await Deno.readTextFile(t.kc)).match(/token: (\S+)/)![1];
  const url = new URL(t.e.server.url);
  // An empty configuration file: everything comes from the flags.
  await Deno.writeTextFile(join(dir.path, "empty"), "");
  const noConfig = ["--platformconfig", join(dir.path, "empty")];
  const p = ["cm", "x", "-p", '{"data":{"a":"1"}}', "--token", admin, ...noConfig];
  const caFile = join(t.e.server.dataDir, "pki", "ca.crt");
  // No CA: the serving certificate is not trusted, unless told to skip the check.
  const untrusted = await ours([...p, "--server", t.e.server.url]);
  assertEquals(untrusted.code, 1);
  assertMatch(untrusted.stderr, /^Unable to connect to the server: .+\n$/);
  assertEquals(
    (await ours([...p, "--server", t.e.server.url, "--insecure-skip-tls-verify"])).stdout,
    "configmap/x patched\n",
  );
  const viaName = (name: string) =>
    ours([
      ...p,
      "--server",
      t.e.server.url,
      "--certificate-authority",
      caFile,
      "--tls-server-name",
      name,
    ]);
  assertEquals((await viaName("localhost")).stdout, "configmap/x patched (no change)\n");
  const wrongName = await viaName("wrong.example");
  assertMatch(wrongName.stderr, /^Unable to connect to the server: .*wrong\.example.*\n$/);
  assertEquals(
    (await ours([
      ...p,
      "--server",
      t.e.server.url,
      "--certificate-authority",
      caFile,
      "--disable-compression",
    ]))
      .stdout,
    "configmap/x patched (no change)\n",
  );
  assertEquals(
    (await ours([
      ...p,
      "--server",
      `127.0.0.1:${url.port}`,
      "--insecure-skip-tls-verify",
      "--certificate-authority",
      caFile,
    ])).stderr,
    "error: specifying a root certificates file with the insecure flag is not allowed\n",
  );
  // A server that accepts and never answers: the request timeout ends the wait.
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of silent) held.push(conn);
  })();
  const hung = await ours([
    ...p,
    "--server",
    `https://127.0.0.1:${silent.addr.port}`,
    "--request-timeout=1s",
  ]);
  silent.close();
  for (const c of held) c.close();
  await accepting.catch(() => {});
  assertEquals(hung.code, 1);
  assertMatch(
    hung.stderr,
    /^Unable to connect to the server: .*did not finish within the request timeout \(1000ms\)\n$/,
  );

  assertEquals((await t.patch(["cm", "x", "-p", "{}", "--match-server-version"])).code, 0);
  assertEquals(
    (await t.patch(["cm", "x", "-p", "{}", "--match-server-version"], { clientVersion: "v9.1.0" }))
      .stderr,
    `error: server version (${CLIENT_VERSION}) differs from client version (v9.1.0)\n`,
  );
  const warned = await t.patch(["cm", "x", "-p", '{"spec":{"z":1}}', "--warnings-as-errors"]);
  assertEquals([warned.code, warned.stderr], [
    1,
    'Warning: unknown field "spec"\nerror: 1 warning received\n',
  ]);
  assertMatch(warned.stdout, /^configmap\/x patched/);
});
