import { assertEquals } from "../../tests/assert.ts";
import { requestInfoOf } from "./request_info.ts";

const info = (method: string, path: string) =>
  requestInfoOf(method, new URL(`https://127.0.0.1:6443${path}`));

Deno.test("request info: resource paths, verbs and namespaces", () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ["GET", "/api/v1/namespaces/default/configmaps/a", {
      verb: "get",
      namespace: "default",
      resource: "configmaps",
      name: "a",
    }],
    ["GET", "/api/v1/namespaces/default/configmaps", { verb: "list", name: "" }],
    ["GET", "/api/v1/namespaces/default/configmaps?watch=1", { verb: "watch" }],
    ["GET", "/api/v1/namespaces/default/configmaps?watch=false", { verb: "list" }],
    ["GET", "/api/v1/watch/namespaces/default/configmaps", { verb: "watch", legacyWatch: true }],
    ["POST", "/api/v1/namespaces/default/configmaps", { verb: "create" }],
    ["DELETE", "/api/v1/namespaces/default/configmaps", { verb: "deletecollection" }],
    ["PUT", "/api/v1/namespaces/x/status", {
      namespace: "x",
      resource: "namespaces",
      name: "x",
      subresource: "status",
    }],
    ["GET", "/api/v1/namespaces", { resource: "namespaces", namespace: "", verb: "list" }],
    // The namespace object's paths are not in a namespace; anything under namespaces/{ns}/ is.
    ["GET", "/api/v1/namespaces/team-a", {
      namespace: "team-a",
      namespaced: false,
      resource: "namespaces",
      name: "team-a",
    }],
    ["GET", "/api/v1/namespaces/eve-ns/namespaces/team-a", {
      namespace: "eve-ns",
      namespaced: true,
      resource: "namespaces",
      name: "team-a",
    }],
    ["GET", "/api/v1/namespaces/eve-ns/namespaces", {
      namespace: "eve-ns",
      namespaced: true,
      verb: "list",
    }],
    ["GET", "/apis/rbac.authorization.platform.io/v1/namespaces/n/clusterroles/x", {
      namespace: "n",
      namespaced: true,
      resource: "clusterroles",
    }],
    ["PATCH", "/apis/coordination.platform.io/v1/namespaces/n/leases/l", {
      verb: "patch",
      apiPrefix: "apis",
      group: "coordination.platform.io",
      version: "v1",
      resource: "leases",
      name: "l",
    }],
    // Doubled slashes are skipped; escaped segments are decoded, malformed ones kept as sent.
    ["GET", "/api/v1//namespaces/default/configmaps/a%2Eb", { name: "a.b", verb: "get" }],
    ["GET", "/api/v1/namespaces/default/configmaps/a%zz", { name: "a%zz" }],
  ];
  for (const [method, path, want] of cases) {
    const got = info(method, path) as unknown as Record<string, unknown>;
    assertEquals(got.isResourceRequest, true, path);
    for (const [k, v] of Object.entries(want)) assertEquals(got[k], v, `${method} ${path}: ${k}`);
  }
});

Deno.test("request info: only kube's methods name verbs; a named path is never a collection verb", () => {
  const cases: [string, string, string][] = [
    ["LIST", "/api/v1/namespaces/d/secrets/s", ""],
    ["DELETECOLLECTION", "/api/v1/namespaces/d/secrets/s", ""],
    ["CREATE", "/api/v1/namespaces/d/configmaps/c", ""],
    ["get", "/api/v1/namespaces/d/configmaps", ""],
    ["OPTIONS", "/api/v1/namespaces/d/configmaps", ""],
    ["HEAD", "/api/v1/namespaces/d/configmaps/c", "get"],
    ["HEAD", "/api/v1/namespaces/d/configmaps", "list"],
    // As kube: `watch` is read only without a name; any value but 0 and false is true.
    ["GET", "/api/v1/namespaces/d/configmaps/c?watch=1", "get"],
    ["GET", "/api/v1/namespaces/d/configmaps?watch=yes", "watch"],
    ["GET", "/api/v1/namespaces/d/configmaps?watch=FALSE", "list"],
    ["GET", "/api/v1/namespaces/d/configmaps?watch=0", "list"],
    ["DELETE", "/api/v1/namespaces/d/configmaps/c", "delete"],
    ["POST", "/api/v1/namespaces/d/configmaps/c", "create"],
    // The legacy prefix is watch whatever the method (the handler serves only GET).
    ["GET", "/api/v1/watch/namespaces/d/configmaps/c", "watch"],
    ["DELETE", "/api/v1/watch/namespaces/d/configmaps", "watch"],
  ];
  for (const [method, path, verb] of cases) {
    assertEquals(info(method, path).verb, verb, `${method} ${path}`);
  }
  assertEquals(info("GET", "/api/v1/watch/namespaces/d/configmaps/c").name, "c");
});

Deno.test("request info: a list or watch selecting one name is on that name, as parsed", () => {
  const cases: [string, string][] = [
    ["?fieldSelector=metadata.name%3Dteam-role", "team-role"],
    ["?fieldSelector=metadata.name%3D%3Dteam-role", "team-role"],
    // Not trimmed: the selector selects "team-role " and so the request is on that name.
    ["?fieldSelector=metadata.name%3Dteam-role%20", "team-role "],
    ["?watch=1&fieldSelector=metadata.name%3Da,metadata.namespace%3Dd", "a"],
    ["?fieldSelector=metadata.name%3Da%5C,b", "a,b"],
    // Not an exact match, not a path segment, or not parsed: no name.
    ["?fieldSelector=metadata.name!%3Da", ""],
    ["?fieldSelector=%20metadata.name%3Da", ""],
    ["?fieldSelector=metadata.name%3Da%2Fb", ""],
    ["?fieldSelector=metadata.name%3D..", ""],
    ["?fieldSelector=metadata.name%3Da,b", ""],
    ["?fieldSelector=nonsense", ""],
  ];
  for (const [query, name] of cases) {
    const got = info("GET", `/api/v1/namespaces/d/roles${query}`);
    assertEquals([got.name, got.selectedName], ["", name], query);
  }
  // Only lists and watches select; the legacy prefix does not (as kube).
  const del = info("DELETE", "/api/v1/namespaces/d/roles?fieldSelector=metadata.name%3Da");
  assertEquals(del.selectedName, "");
  assertEquals(
    info("GET", "/api/v1/watch/namespaces/d/roles?fieldSelector=metadata.name%3Da").selectedName,
    "",
  );
});

Deno.test("request info: a built-in group is read in its canonical spelling", () => {
  const kube = info("GET", "/apis/certificates.k8s.io/v1/certificatesigningrequests");
  assertEquals([kube.group, kube.kubeSpelling], ["certificates.platform.io", true]);
  const ours = info("GET", "/apis/certificates.platform.io/v1/certificatesigningrequests");
  assertEquals([ours.group, ours.kubeSpelling], ["certificates.platform.io", false]);
  // Custom groups have one spelling.
  const custom = info("GET", "/apis/widgets.k8s.io/v1/widgets");
  assertEquals([custom.group, custom.kubeSpelling], ["widgets.k8s.io", false]);
});

Deno.test("request info: discovery and other paths are non-resource requests", () => {
  for (const path of ["/", "/api", "/api/v1", "/apis/g/v1", "/version", "/openapi/v3?x=1"]) {
    const got = info("GET", path);
    assertEquals([got.isResourceRequest, got.verb], [false, "get"], path);
  }
  assertEquals(info("HEAD", "/healthz").verb, "head");
});
