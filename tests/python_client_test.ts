/**
 * Debian's python3-kubernetes against the server: a typed watch (which sends `watch=True`),
 * the dynamic client resolving kinds by their Kubernetes group names, and server-side apply
 * with `force=True`. The client runs under /usr/bin/python3, the interpreter Debian's package
 * is installed for. Without it the test is skipped with the reason printed, except under
 * CI=true, where `.ci/run` installs it and its absence fails.
 */

import assert from "node:assert/strict";
import { createAsAdmin, testServer } from "./harness.ts";

const PYTHON = "/usr/bin/python3";

async function pythonClientInstalled(): Promise<boolean> {
  try {
    const out = await new Deno.Command(PYTHON, {
      args: ["-c", "import kubernetes"],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}

const installed = await pythonClientInstalled();
if (!installed) {
  if (Deno.env.get("CI") === "true") {
    Deno.test("python3-kubernetes is installed (required under CI)", () => {
      throw new Error(`${PYTHON} cannot import kubernetes: apt-get install python3-kubernetes`);
    });
  } else {
    console.warn(
      `python_client_test: skipped: ${PYTHON} cannot import kubernetes ` +
        "(apt-get install python3-kubernetes)",
    );
  }
}

Deno.test({
  name: "python client: typed watch, dynamic client by Kubernetes names, forced apply",
  ignore: !installed,
}, async () => {
  await using ts = await testServer({ storage: "file" });
  await createAsAdmin(ts, "/api/v1/namespaces", { metadata: { name: "py" } });
  const script = new URL("./python/client_check.py", import.meta.url).pathname;
  const out = await new Deno.Command(PYTHON, {
    args: [script, "py"],
    env: { KUBECONFIG: ts.server.kubeconfigPath! },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  const seen = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.deepEqual(seen.watch, [["ADDED", "first"], ["ADDED", "second"]]);
  assert.equal(seen.role_api_version, "rbac.authorization.k8s.io/v1");
  assert.deepEqual(seen.role_names, ["reader"]);
  assert.equal(seen.crd_kind, "CustomResourceDefinition");
  assert.equal(seen.conflict, 409);
  assert.equal(seen.forced_holder, "b");
});
