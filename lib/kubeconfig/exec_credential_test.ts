/** ExecCredential plugins: real plugin scripts, run as the client runs them. */

import { assert, assertEquals } from "../../tests/assert.ts";
import { type ExecConfig, ExecCredentialError, ExecCredentialProvider } from "./mod.ts";

async function pluginDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "platform-exec-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

/** A plugin script `body` (bash) in `dir`; each run appends a line to `dir/runs`. */
async function plugin(dir: string, body: string): Promise<string> {
  const path = `${dir}/plugin.sh`;
  await Deno.writeTextFile(path, `#!/bin/bash\necho run >> "${dir}/runs"\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

function config(command: string, extra: Partial<ExecConfig> = {}): ExecConfig {
  return {
    command,
    args: [],
    env: [],
    apiVersion: "client.authentication.platform.io/v1",
    provideClusterInfo: false,
    interactiveMode: "Never",
    ...extra,
  };
}

async function failure(p: ExecCredentialProvider): Promise<string> {
  const err = await p.credential().then(() => undefined, (e) => e);
  assert(err instanceof ExecCredentialError, `expected an ExecCredentialError, got ${err}`);
  return (err as Error).message;
}

Deno.test("exec: a token plugin gets KUBERNETES_EXEC_INFO, env and args", async () => {
  await using dir = await pluginDir();
  // The plugin echoes what it was given back inside the token, as JSON.
  const command = await plugin(
    dir.path,
    `printf '%s' "$KUBERNETES_EXEC_INFO" > "${dir.path}/info"
echo "{\\"apiVersion\\":\\"client.authentication.k8s.io/v1\\",\\"kind\\":\\"ExecCredential\\",\\"status\\":{\\"token\\":\\"tok-$GREETING-$1\\"}}"`,
  );
  const p = new ExecCredentialProvider(
    config(command, {
      apiVersion: "client.authentication.k8s.io/v1",
      args: ["arg1"],
      env: [{ name: "GREETING", value: "hello" }],
      provideClusterInfo: true,
    }),
    {
      cluster: { server: "https://127.0.0.1:6443", "certificate-authority-data": "Q0E=" },
      stdinIsTerminal: false,
    },
  );
  assertEquals(await p.credential(), { token: "tok-hello-arg1" });
  assertEquals(JSON.parse(await Deno.readTextFile(`${dir.path}/info`)), {
    kind: "ExecCredential",
    apiVersion: "client.authentication.k8s.io/v1",
    spec: {
      interactive: false,
      cluster: { server: "https://127.0.0.1:6443", "certificate-authority-data": "Q0E=" },
    },
  });
  // Cached: no expiry, no second run.
  await p.credential();
  assertEquals(p.runs, 1);
});

Deno.test("exec: without provideClusterInfo the spec has no cluster", async () => {
  await using dir = await pluginDir();
  const command = await plugin(
    dir.path,
    `printf '%s' "$KUBERNETES_EXEC_INFO" > "${dir.path}/info"
echo '{"apiVersion":"client.authentication.platform.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`,
  );
  const p = new ExecCredentialProvider(
    config(command, { apiVersion: "client.authentication.platform.io/v1beta1" }),
    { cluster: { server: "https://x:1" }, stdinIsTerminal: false },
  );
  await p.credential();
  assertEquals(JSON.parse(await Deno.readTextFile(`${dir.path}/info`)).spec, {
    interactive: false,
  });
});

Deno.test("exec: a certificate plugin returns the certificate and key", async () => {
  await using dir = await pluginDir();
  const command = await plugin(
    dir.path,
    `echo '{"apiVersion":"client.authentication.platform.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}}'`,
  );
  const p = new ExecCredentialProvider(config(command), { stdinIsTerminal: false });
  assertEquals(await p.credential(), { clientCertificateData: "CERT", clientKeyData: "KEY" });
});

Deno.test("exec: the credential is kept until it expires, and dropped on invalidate", async () => {
  await using dir = await pluginDir();
  const command = await plugin(
    dir.path,
    `n=$(wc -l < "${dir.path}/runs")
echo "{\\"apiVersion\\":\\"client.authentication.platform.io/v1\\",\\"kind\\":\\"ExecCredential\\",\\"status\\":{\\"token\\":\\"t$n\\",\\"expirationTimestamp\\":\\"2030-01-01T00:00:00Z\\"}}"`,
  );
  let now = Date.parse("2029-12-31T23:59:00Z");
  const p = new ExecCredentialProvider(config(command), {
    stdinIsTerminal: false,
    now: () => now,
  });
  assertEquals((await p.credential()).token, "t1");
  assertEquals((await p.credential()).token, "t1");
  now = Date.parse("2030-01-01T00:00:00Z");
  assertEquals((await p.credential()).token, "t2", "expired: the plugin runs again");
  now = Date.parse("2029-01-01T00:00:00Z");
  assertEquals((await p.credential()).token, "t2");
  p.invalidate();
  assertEquals((await p.credential()).token, "t3", "after a 401: the plugin runs again");
  assertEquals(p.runs, 3);
});

Deno.test("exec: a failing plugin is reported with its exit code and stderr", async () => {
  await using dir = await pluginDir();
  const command = await plugin(dir.path, `echo "no session, run login" >&2\nexit 3`);
  const p = new ExecCredentialProvider(config(command), { stdinIsTerminal: false });
  assertEquals(
    await failure(p),
    `getting credentials: exec: executable ${command} failed with exit code 3; ` +
      "stderr: no session, run login",
  );
});

Deno.test("exec: garbage output, a wrong version or an empty status are errors", async () => {
  await using dir = await pluginDir();
  const cases: [string, string][] = [
    [
      `echo 'hello world'; echo oops >&2`,
      'getting credentials: decoding stdout: not an ExecCredential in JSON: "hello world"; ' +
      "stderr: oops",
    ],
    [
      `echo '{"apiVersion":"client.authentication.platform.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`,
      "getting credentials: exec plugin is configured to use API version " +
      "client.authentication.platform.io/v1, plugin returned version " +
      "client.authentication.platform.io/v1beta1",
    ],
    [
      `echo '{"apiVersion":"client.authentication.platform.io/v1","kind":"ExecCredential"}'`,
      "getting credentials: exec plugin didn't return a status field",
    ],
    [
      `echo '{"apiVersion":"client.authentication.platform.io/v1","kind":"ExecCredential","status":{}}'`,
      "getting credentials: exec plugin didn't return a token or cert/key pair",
    ],
    [
      `echo '{"apiVersion":"client.authentication.platform.io/v1","kind":"ExecCredential","status":{"clientKeyData":"K"}}'`,
      "getting credentials: exec plugin returned only certificate or key, not both",
    ],
  ];
  for (const [body, message] of cases) {
    const command = await plugin(dir.path, body);
    assertEquals(
      await failure(new ExecCredentialProvider(config(command), { stdinIsTerminal: false })),
      message,
    );
  }
});

Deno.test("exec: a missing program names the install hint", async () => {
  const p = new ExecCredentialProvider(
    config("/nonexistent/platform-login", { installHint: "install it with: get platform-login" }),
    { stdinIsTerminal: false },
  );
  assertEquals(
    await failure(p),
    "getting credentials: exec: executable /nonexistent/platform-login not found " +
      "(install it with: get platform-login)",
  );
});

Deno.test("exec: a hanging plugin is stopped after the timeout", async () => {
  await using dir = await pluginDir();
  const command = await plugin(dir.path, "exec sleep 60");
  const p = new ExecCredentialProvider(config(command), {
    stdinIsTerminal: false,
    timeoutMs: 300,
  });
  assertEquals(
    await failure(p),
    `getting credentials: exec: executable ${command} did not finish within 300ms`,
  );
});

Deno.test("exec: interactiveMode Always needs a terminal", async () => {
  await using dir = await pluginDir();
  const command = await plugin(dir.path, "exit 0");
  const p = new ExecCredentialProvider(config(command, { interactiveMode: "Always" }), {
    stdinIsTerminal: false,
  });
  assertEquals(
    await failure(p),
    "getting credentials: exec plugin cannot support interactive mode: standard input is not " +
      "a terminal",
  );
  assertEquals(p.runs, 0);
});
