// deno-lint-ignore-file no-explicit-any
/**
 * `--runtime-config` takes effect: a disabled group/version or resource is gone from
 * discovery (plain and aggregated), OpenAPI v3 and v2, and routing (404), in either spelling of
 * a built-in group; what the server cannot do without is refused at start in one line, and
 * what it can do without turns its feature off cleanly.
 */

import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { createAsAdmin, runPlatform, type TestServer, testServer } from "./harness.ts";
import { parseRuntimeConfig } from "../lib/config/runtime_config.ts";
import { ConfigError } from "../lib/config/mod.ts";
import { startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";

const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/** Every group/version and resource a client can find, by each way there is to look. */
async function surface(ts: TestServer) {
  const groups = (await ts.json("GET", "/apis")).body.groups.map((g: any) => g.name);
  const core = (await ts.json("GET", "/api/v1")).body.resources.map((r: any) => r.name);
  const aggregated = await ts.json("GET", "/apis", { headers: { Accept: AGGREGATED } });
  const aggregatedGroups = aggregated.body.items.map((g: any) => g.metadata.name);
  const v3 = Object.keys((await ts.json("GET", "/openapi/v3")).body.paths);
  const v2 = (await ts.json("GET", "/openapi/v2")).body;
  return { groups, core, aggregatedGroups, v3, v2Paths: Object.keys(v2.paths) };
}

Deno.test("a disabled group/version is gone from discovery, OpenAPI and routing", async () => {
  // The Kubernetes spelling of the group disables the same group/version.
  await using ts = await testServer({
    runtimeConfig: parseRuntimeConfig("coordination.k8s.io/v1=false"),
  });
  const s = await surface(ts);
  assert(!s.groups.includes("coordination.platform.io"), s.groups.join());
  assert(!s.aggregatedGroups.includes("coordination.platform.io"), s.aggregatedGroups.join());
  assert(!s.v3.some((p: string) => p.includes("coordination")), s.v3.join());
  assert(!s.v2Paths.some((p: string) => p.includes("coordination")));
  // Other groups are still there.
  assert(s.groups.includes("certificates.platform.io"));
  assert(s.v3.includes("apis/certificates.platform.io/v1"), s.v3.join());
  for (const group of ["coordination.platform.io", "coordination.k8s.io"]) {
    const res = await ts.json("GET", `/apis/${group}/v1/namespaces/default/leases`);
    assertEquals(res.status, 404, group);
    const post = await ts.json("POST", `/apis/${group}/v1/namespaces/default/leases`, {
      body: { apiVersion: `${group}/v1`, kind: "Lease", metadata: { name: "l" } },
    });
    assertEquals(post.status, 404, group);
    assertEquals((await ts.json("GET", `/apis/${group}`)).status, 404, group);
    assertEquals((await ts.json("GET", `/apis/${group}/v1`)).status, 404, group);
    assertEquals((await ts.json("GET", `/openapi/v3/apis/${group}/v1`)).status, 404, group);
  }
});

Deno.test("a disabled resource is gone; the rest of its group/version is served", async () => {
  await using ts = await testServer({
    runtimeConfig: parseRuntimeConfig("api/v1/configmaps=false"),
  });
  const s = await surface(ts);
  assert(!s.core.includes("configmaps"), s.core.join());
  assert(s.core.includes("secrets"), s.core.join());
  assert(!s.v2Paths.some((p: string) => p.includes("/configmaps")));
  const v1 = (await ts.json("GET", "/openapi/v3/api/v1")).body;
  assert(!Object.keys(v1.paths).some((p) => p.includes("/configmaps")));
  assert(Object.keys(v1.paths).some((p) => p.includes("/secrets")));
  assertEquals((await ts.json("GET", "/api/v1/namespaces/default/configmaps")).status, 404);
  assertEquals((await ts.json("GET", "/api/v1/namespaces/default/secrets")).status, 200);
});

Deno.test("a resource can be enabled in a disabled group/version", async () => {
  await using ts = await testServer({
    runtimeConfig: parseRuntimeConfig(
      "authorization.k8s.io/v1=false,authorization.k8s.io/v1/selfsubjectaccessreviews=true",
    ),
  });
  const res = await ts.json("GET", "/apis/authorization.platform.io/v1");
  assertEquals(res.status, 200);
  assertEquals(res.body.resources.map((r: any) => r.name), ["selfsubjectaccessreviews"]);
  const sar = await ts.json("POST", "/apis/authorization.platform.io/v1/subjectaccessreviews", {
    body: {
      kind: "SubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      spec: { user: "x", resourceAttributes: { verb: "get", resource: "pods" } },
    },
  });
  assertEquals(sar.status, 404);
});

Deno.test("without v1/serviceaccounts no service account token is issued or accepted", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-rc-test-" });
  try {
    let token: string;
    {
      await using ts = await testServer({ dataDir: dir, storage: "file" });
      await createAsAdmin(ts, "/api/v1/namespaces/default/serviceaccounts", {
        metadata: { name: "robot" },
      });
      token = (await createAsAdmin(
        ts,
        "/api/v1/namespaces/default/serviceaccounts/robot/token",
        { kind: "TokenRequest", spec: {} },
      )).status.token;
      // Signed in: forbidden (no role), not unauthenticated.
      assertEquals((await ts.json("GET", "/api/v1/namespaces", { token })).status, 403);
    }
    await using ts = await testServer({
      dataDir: dir,
      storage: "file",
      runtimeConfig: parseRuntimeConfig("v1/serviceaccounts=false"),
    });
    assertEquals((await ts.json("GET", "/api/v1/namespaces", { token })).status, 401);
    const path = "/api/v1/namespaces/default/serviceaccounts/robot/token";
    const res = await ts.json("POST", path, { body: { kind: "TokenRequest", spec: {} } });
    assertEquals(res.status, 404);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** An authorization configuration without RBAC, so that RBAC's group may be disabled. */
async function alwaysAllow(dir: string): Promise<string> {
  const path = join(dir, "authz.yaml");
  await Deno.writeTextFile(
    path,
    "apiVersion: apiserver.platform.io/v1\nkind: AuthorizationConfiguration\n" +
      "authorizers:\n- type: AlwaysAllow\n  name: allow\n",
  );
  return path;
}

Deno.test("api/all=false,v1=true serves the core API only; the controllers of the others stay off", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-rc-test-" });
  try {
    await using ts = await testServer({
      authorizationConfigFile: await alwaysAllow(dir),
      runtimeConfig: parseRuntimeConfig("api/all=false,v1=true"),
    });
    const s = await surface(ts);
    assertEquals(s.groups, []);
    assertEquals(s.aggregatedGroups, []);
    assert(s.v3.includes("api/v1"));
    assert(s.v3.every((p: string) => !p.startsWith("apis/")), s.v3.join());
    assert(s.v2Paths.every((p: string) => p === "/apis/" || !p.startsWith("/apis/")));
    for (
      const path of [
        "/apis/rbac.authorization.platform.io/v1/clusterroles",
        "/apis/apiextensions.platform.io/v1/customresourcedefinitions",
        "/apis/certificates.platform.io/v1/certificatesigningrequests",
      ]
    ) {
      assertEquals((await ts.json("GET", path)).status, 404, path);
    }
    const ns = await ts.json("GET", "/api/v1/namespaces/platform-system");
    assertEquals(ns.status, 200);
    // The namespace lifecycle still works with what is left.
    const cm = await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
      body: { metadata: { name: "c" }, data: { a: "b" } },
    });
    assertEquals(cm.status, 201, JSON.stringify(cm.body));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("disabling what the server needs is refused before anything is created", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-rc-test-" });
  try {
    const cases: [string, RegExp][] = [
      ["v1=false", /^--runtime-config: v1 \(the core API\) cannot be disabled/],
      ["api/all=false", /v1 \(the core API\) cannot be disabled.*add v1=true/],
      ["api/v1/namespaces=false", /^--runtime-config: v1\/namespaces cannot be disabled/],
      [
        "rbac.authorization.k8s.io/v1=false",
        /^--runtime-config: rbac\.authorization\.platform\.io\/v1 cannot be disabled while RBAC authorizes/,
      ],
      [
        "rbac.authorization.platform.io/v1/roles=false",
        /rbac\.authorization\.platform\.io\/v1\/roles cannot be disabled while RBAC authorizes/,
      ],
      ["apps/v1=false", /^--runtime-config: unknown group\/version "apps\/v1"$/],
      ["v1/pods=false", /^--runtime-config: unknown resource "v1\/pods"$/],
    ];
    for (const [text, re] of cases) {
      const dataDir = join(dir, "data");
      const err = await startServer({
        dataDir,
        storage: "memory",
        logger: silentLogger,
        runtimeConfig: parseRuntimeConfig(text),
      }).then(
        async (s) => {
          await s.close();
          return undefined;
        },
        (e) => e,
      );
      assert(err instanceof ConfigError, `${text}: ${err}`);
      assertMatch(err.message, re, text);
      assert(!err.message.includes("\n"), text);
      // Refused before the data directory was made.
      assertEquals(await Deno.stat(dataDir).then(() => true, () => false), false, text);
    }
    // With an authorizer other than RBAC, RBAC's group may go.
    await using ts = await testServer({
      authorizationConfigFile: await alwaysAllow(dir),
      runtimeConfig: parseRuntimeConfig("rbac.authorization.k8s.io/v1=false"),
    });
    const s = await surface(ts);
    assert(!s.groups.includes("rbac.authorization.platform.io"));
    assert(s.groups.includes("apiextensions.platform.io"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("platform serve --runtime-config: a refused setting exits 2 in one line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-rc-test-" });
  try {
    for (const args of [["--runtime-config", "v1=false"], ["--runtime-config=apps/v1=false"]]) {
      const run = await runPlatform("--data-dir", dir, "--secure-port", "0", ...args);
      assertEquals(run.code, 2, run.stderr);
      const lines = run.stderr.trimEnd().split("\n");
      assertEquals(lines.length, 1, run.stderr);
      assertMatch(lines[0], /^platform: --runtime-config: /);
    }
    const check = await runPlatform("check-config", "--runtime-config", "api/v1/namespaces=false");
    assertEquals(check.code, 2, check.stderr);
    assertMatch(check.stderr, /^platform: --runtime-config: v1\/namespaces cannot be disabled/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const SSR_V1BETA1 = "/apis/authentication.k8s.io/v1beta1/selfsubjectreviews";
const SSR_WARNING =
  '299 - "authentication.platform.io/v1beta1 SelfSubjectReview is deprecated in v1.30+, ' +
  'unavailable in v1.33+"';

/** The versions of the authentication group each way a client can look. */
async function authenticationVersions(ts: TestServer) {
  const group = (await ts.json("GET", "/apis")).body.groups
    .find((g: any) => g.name === "authentication.platform.io");
  const aggregated = (await ts.json("GET", "/apis", { headers: { Accept: AGGREGATED } })).body
    .items.find((g: any) => g.metadata.name === "authentication.platform.io");
  const v3 = Object.keys((await ts.json("GET", "/openapi/v3")).body.paths)
    .filter((p) => p.startsWith("apis/authentication.platform.io/"));
  const v2 = Object.keys((await ts.json("GET", "/openapi/v2")).body.paths)
    .filter((p) => p.startsWith("/apis/authentication.platform.io/v1beta1/"));
  return {
    discovery: group.versions.map((v: any) => v.version),
    aggregated: aggregated.versions.map((v: any) => v.version),
    v3,
    v2,
  };
}

Deno.test("a beta built-in version is off by default, as in kube: 404 and absent everywhere", async () => {
  await using ts = await testServer();
  const seen = await authenticationVersions(ts);
  assertEquals(seen.discovery, ["v1"]);
  assertEquals(seen.aggregated, ["v1"]);
  assertEquals(seen.v3, ["apis/authentication.platform.io/v1"]);
  assertEquals(seen.v2, []);
  const res = await ts.json("POST", SSR_V1BETA1, { body: { kind: "SelfSubjectReview" } });
  assertEquals(res.status, 404);
  assertEquals((await ts.json("GET", "/apis/authentication.k8s.io/v1beta1")).status, 404);
  // v1 answers, with no Warning.
  const v1 = await ts.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
    body: { kind: "SelfSubjectReview", apiVersion: "authentication.k8s.io/v1" },
  });
  assertEquals(v1.status, 201);
  assertEquals(v1.headers.get("Warning"), null);
  await v1.body?.cancel();
});

Deno.test("a deprecated built-in version, switched on, warns on every request in kube's words", async () => {
  for (const text of ["authentication.k8s.io/v1beta1=true", "api/beta=true"]) {
    await using ts = await testServer({ runtimeConfig: parseRuntimeConfig(text) });
    const seen = await authenticationVersions(ts);
    assertEquals(seen.discovery, ["v1", "v1beta1"], text);
    assertEquals(seen.aggregated, ["v1", "v1beta1"], text);
    assert(seen.v3.includes("apis/authentication.platform.io/v1beta1"), text);
    assert(seen.v2.length > 0, text);
    for (const path of [SSR_V1BETA1, SSR_V1BETA1.replace("k8s.io", "platform.io")]) {
      const res = await ts.json("POST", path, {
        body: { kind: "SelfSubjectReview", apiVersion: "authentication.k8s.io/v1beta1" },
      });
      assertEquals(res.status, 201, `${text} ${path}: ${JSON.stringify(res.body)}`);
      assertEquals(res.body.status.userInfo.username, "platform-admin");
      // The group as the request spelled it.
      const warning = path.includes("k8s.io")
        ? SSR_WARNING.replace("platform.io", "k8s.io")
        : SSR_WARNING;
      assertEquals(res.headers.get("Warning"), warning, `${text} ${path}`);
    }
  }
});

Deno.test("the most specific runtime-config key wins over api/beta for a beta version", async () => {
  await using ts = await testServer({
    runtimeConfig: parseRuntimeConfig("api/beta=true,authentication.k8s.io/v1beta1=false"),
  });
  assertEquals((await authenticationVersions(ts)).discovery, ["v1"]);
  const res = await ts.json("POST", SSR_V1BETA1, { body: { kind: "SelfSubjectReview" } });
  assertEquals(res.status, 404);
});

Deno.test("a removed version answers 404 and cannot be switched on", async () => {
  // authentication.k8s.io/v1beta1 TokenReview and coordination.k8s.io/v1beta1 Lease were
  // removed in 1.22: not even `api/all=true` serves them.
  await using ts = await testServer({ runtimeConfig: parseRuntimeConfig("api/all=true") });
  const review = await ts.json("POST", "/apis/authentication.k8s.io/v1beta1/tokenreviews", {
    body: { kind: "TokenReview", spec: { token: "x" } },
  });
  assertEquals(review.status, 404);
  const leases = await ts.json("GET", "/apis/coordination.k8s.io/v1beta1/leases");
  assertEquals(leases.status, 404);
  const run = await runPlatform(
    "check-config",
    "--runtime-config",
    "authentication.k8s.io/v1beta1/tokenreviews=true",
  );
  assertEquals(run.code, 2, run.stderr);
  assertEquals(
    run.stderr.trimEnd(),
    'platform: --runtime-config: unknown resource "authentication.platform.io/v1beta1/tokenreviews"',
  );
});
