// deno-lint-ignore-file no-explicit-any
/**
 * Kubernetes' group names: discovery, OpenAPI and answers in the spelling asked for, so that
 * manifests and clients written for Kubernetes work unchanged (`--kubernetes-group-names`).
 */

import assert from "node:assert/strict";
import { createAsAdmin, testServer } from "./harness.ts";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";
import { BUILTIN_GROUPS, kubeGroup } from "../lib/api/group_names.ts";
import { decodeObject } from "../lib/codec/mod.ts";

const bundle = await Deno.readTextFile(
  new URL("../testdata/kube-manifests/bundle.yaml", import.meta.url),
);
const SERVED_GROUPS = [...BUILTIN_GROUPS].filter((g) =>
  !g.startsWith("meta.") && !g.startsWith("apidiscovery.")
);
const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

Deno.test("kubernetes names: discovery lists each built-in group in both spellings", async () => {
  await using ts = await testServer();
  const groups = (await ts.json("GET", "/apis")).body.groups.map((g: any) => g.name);
  for (const g of SERVED_GROUPS) {
    assert.ok(groups.includes(g), `${g} listed`);
    // Kubernetes' spelling comes first: kubectl resolves `get roles` and `csr` to it.
    assert.ok(groups.indexOf(kubeGroup(g)) < groups.indexOf(g), `${kubeGroup(g)} before ${g}`);
  }
  const firstPlatform = Math.min(...SERVED_GROUPS.map((g) => groups.indexOf(g)));
  assert.ok(SERVED_GROUPS.every((g) => groups.indexOf(kubeGroup(g)) < firstPlatform));

  const group = await ts.json("GET", "/apis/certificates.k8s.io");
  assert.equal(group.status, 200);
  assert.equal(group.body.preferredVersion.groupVersion, "certificates.k8s.io/v1");

  const list = await ts.json("GET", "/apis/rbac.authorization.k8s.io/v1");
  assert.equal(list.status, 200);
  assert.equal(list.body.groupVersion, "rbac.authorization.k8s.io/v1");
  assert.deepEqual(
    list.body.resources.map((r: any) => r.name).sort(),
    ["clusterrolebindings", "clusterroles", "rolebindings", "roles"],
  );

  const aggregated = await ts.json("GET", "/apis", { headers: { Accept: AGGREGATED } });
  const names = aggregated.body.items.map((i: any) => i.metadata.name);
  assert.ok(names.includes("apiextensions.k8s.io") && names.includes("apiextensions.platform.io"));
  const crds = aggregated.body.items.find((i: any) => i.metadata.name === "apiextensions.k8s.io");
  assert.equal(crds.versions[0].resources[0].resource, "customresourcedefinitions");
});

Deno.test("kubernetes names: OpenAPI v3 and v2 describe the kinds in both spellings", async () => {
  await using ts = await testServer();
  const index = (await ts.json("GET", "/openapi/v3")).body.paths;
  for (const g of SERVED_GROUPS) {
    assert.ok(index[`apis/${g}/v1`], g);
    assert.ok(index[`apis/${kubeGroup(g)}/v1`], kubeGroup(g));
  }
  const gvk = "x-kubernetes-group-version-kind";
  const kubeDoc =
    (await ts.json("GET", index["apis/rbac.authorization.k8s.io/v1"].serverRelativeURL))
      .body;
  assert.deepEqual(kubeDoc.components.schemas["io.k8s.api.rbac.v1.Role"][gvk], [
    { group: "rbac.authorization.k8s.io", kind: "Role", version: "v1" },
  ]);
  assert.deepEqual(
    kubeDoc.paths["/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles"].get
      .operationId,
    "listRbacAuthorizationV1NamespacedRole",
  );
  const platformDoc =
    (await ts.json("GET", index["apis/rbac.authorization.platform.io/v1"].serverRelativeURL)).body;
  assert.deepEqual(platformDoc.components.schemas["io.k8s.api.rbac.v1.Role"][gvk], [
    { group: "rbac.authorization.platform.io", kind: "Role", version: "v1" },
  ]);
  const v2 = (await ts.json("GET", "/openapi/v2")).body;
  const groupsOf = (name: string) => v2.definitions[name][gvk].map((x: any) => x.group).sort();
  assert.deepEqual(groupsOf("io.k8s.api.rbac.v1.Role"), [
    "rbac.authorization.k8s.io",
    "rbac.authorization.platform.io",
  ]);
  assert.ok(v2.paths["/apis/apiextensions.k8s.io/v1/customresourcedefinitions"]);
});

Deno.test("kubernetes names: answers come in the spelling asked for, lists and watches included", async () => {
  await using ts = await testServer();
  await createAsAdmin(ts, "/apis/rbac.authorization.platform.io/v1/namespaces/default/roles", {
    metadata: { name: "r" },
    rules: [],
  });
  const kube = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles";
  const platform = "/apis/rbac.authorization.platform.io/v1/namespaces/default/roles";
  const spelled = (obj: any) => [obj.apiVersion, obj.metadata.managedFields[0].apiVersion];

  const list = (await ts.json("GET", kube)).body;
  assert.equal(list.apiVersion, "rbac.authorization.k8s.io/v1");
  assert.deepEqual(spelled(list.items[0]), [
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1",
  ]);
  const yaml = await (await ts.request("GET", kube, { headers: { Accept: "application/yaml" } }))
    .text();
  assert.match(yaml, /\napiVersion: rbac.authorization.k8s.io\/v1\n/);
  assert.match(yaml, /\n {2}apiVersion: rbac.authorization.k8s.io\/v1\n/);
  assert.doesNotMatch(yaml, /platform\.io/);
  assert.deepEqual(spelled((await ts.json("GET", `${kube}/r`)).body), [
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1",
  ]);
  const watch = await ts.request("GET", `${kube}?watch=true&timeoutSeconds=1`);
  const event = JSON.parse((await watch.text()).split("\n")[0]);
  assert.equal(event.type, "ADDED");
  assert.deepEqual(spelled(event.object), [
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1",
  ]);
  // Kubernetes' typed clients read protobuf: the list envelope and its items alike.
  const proto = await ts.request("GET", kube, {
    headers: { Accept: "application/vnd.kubernetes.protobuf" },
  });
  const bytes = new Uint8Array(await proto.arrayBuffer());
  assert.equal((decodeObject(bytes) as any).items[0].metadata.name, "r");
  // The decoder reads either spelling as the canonical one: look at the bytes themselves.
  const text = new TextDecoder().decode(bytes);
  assert.equal(text.split("rbac.authorization.k8s.io/v1").length - 1, 2); // list and entry
  assert.doesNotMatch(text, /platform\.io/);
  // Errors name the group as the client did.
  const missing = await ts.json("GET", `${kube}/nope`);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.message, 'roles.rbac.authorization.k8s.io "nope" not found');
  assert.equal(missing.body.details.group, "rbac.authorization.k8s.io");
  assert.equal(
    (await ts.json("GET", `${platform}/nope`)).body.message,
    'roles.rbac.authorization.platform.io "nope" not found',
  );
  // The canonical spelling is unchanged, also after the other was cached.
  const again = (await ts.json("GET", platform)).body;
  assert.deepEqual(spelled(again.items[0]), [
    "rbac.authorization.platform.io/v1",
    "rbac.authorization.platform.io/v1",
  ]);
});

Deno.test("kubernetes names: --kubernetes-group-names=false lists only the platform names", async () => {
  await using ts = await testServer({ kubernetesGroupNames: false });
  const groups = (await ts.json("GET", "/apis")).body.groups.map((g: any) => g.name);
  assert.deepEqual(groups.filter((g: string) => g.endsWith(".k8s.io")), []);
  assert.equal((await ts.json("GET", "/apis/rbac.authorization.k8s.io")).status, 404);
  assert.equal((await ts.json("GET", "/apis/rbac.authorization.k8s.io/v1")).status, 404);
  const index = (await ts.json("GET", "/openapi/v3")).body.paths;
  assert.equal(index["apis/rbac.authorization.k8s.io/v1"], undefined);
  assert.ok(index["apis/rbac.authorization.platform.io/v1"]);
  // Requests under the Kubernetes name still reach the objects.
  const roles = await ts.json("GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles");
  assert.equal(roles.status, 200);
  assert.equal(roles.body.apiVersion, "rbac.authorization.k8s.io/v1");
});

Deno.test({
  name: "kubernetes names: kubectl applies a bundle written for Kubernetes unchanged",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using env = await kubectlEnv();
  const { kubectl, ok } = env;
  const dir = await Deno.makeTempDir({ prefix: "platform-bundle-" });
  const file = `${dir}/bundle.yaml`;
  await Deno.writeTextFile(file, bundle);
  try {
    await t.step("apply with client-side validation, then again: unchanged", async () => {
      const first = await ok(["apply", "-f", file]);
      assert.match(
        first,
        /customresourcedefinition.apiextensions.k8s.io\/gadgets.example.com created/,
      );
      assert.match(first, /clusterrole.rbac.authorization.k8s.io\/gadget-editor created/);
      assert.match(first, /role.rbac.authorization.k8s.io\/gadget-reader created/);
      assert.match(first, /rolebinding.rbac.authorization.k8s.io\/gadget-readers created/);
      assert.match(first, /lease.coordination.k8s.io\/gadget-controller created/);
      const second = await ok(["apply", "-f", file]);
      assert.equal(second.match(/ unchanged\n/g)?.length, 5, second);
    });

    await t.step("diff shows nothing; server-side apply and validation pass", async () => {
      const diff = await kubectl(["diff", "-f", file]);
      assert.equal(diff.code, 0, diff.stderr + diff.stdout);
      assert.equal(diff.stdout, "");
      const ssa = await ok(["apply", "--server-side", "--force-conflicts", "-f", file]);
      assert.match(ssa, /role.rbac.authorization.k8s.io\/gadget-reader serverside-applied/);
      // A typo is caught by validation against the Kubernetes-spelled schema.
      const bad = await kubectl(
        ["apply", "--validate=strict", "-f", "-"],
        bundle.replace("leaseDurationSeconds: 15", "leaseDurationSecondz: 15"),
      );
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /unknown field "spec.leaseDurationSecondz"/);
    });

    await t.step("explain a Kubernetes-spelled kind", async () => {
      const out = await ok(["explain", "roles.rbac.authorization.k8s.io.rules"]);
      assert.match(out, /GROUP:\s+rbac.authorization.k8s.io/);
      assert.match(out, /FIELD: rules/);
    });

    await t.step("kubectl's choice of spelling is Kubernetes', unless named", async () => {
      const plain = await ok(["get", "roles", "-o", "jsonpath={.items[*].apiVersion}"]);
      assert.equal(plain, "rbac.authorization.k8s.io/v1");
      const named = await ok([
        "get",
        "roles.rbac.authorization.platform.io",
        "-o",
        "jsonpath={.items[*].apiVersion}",
      ]);
      assert.equal(named, "rbac.authorization.platform.io/v1");
      const resources = await ok([
        "api-resources",
        "--api-group=coordination.k8s.io",
        "-o",
        "name",
      ]);
      assert.equal(resources, "leases.coordination.k8s.io\n");
    });

    await t.step("the RBAC written in Kubernetes' names authorizes", async () => {
      await ok(["wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=20s"]);
      const can = await kubectl([
        "auth",
        "can-i",
        "list",
        "gadgets",
        "--as",
        "jane",
        "-n",
        "default",
      ]);
      assert.equal(can.stdout.trim(), "yes");
      const cannot = await kubectl(["auth", "can-i", "delete", "gadgets", "--as", "jane"]);
      assert.equal(cannot.stdout.trim(), "no");
    });

    await t.step("delete -f removes everything", async () => {
      const out = await ok(["delete", "-f", file]);
      assert.equal(out.match(/ deleted\n/g)?.length, 5, out);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
