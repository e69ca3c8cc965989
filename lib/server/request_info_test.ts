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

Deno.test("request info: discovery and other paths are non-resource requests", () => {
  for (const path of ["/", "/api", "/api/v1", "/apis/g/v1", "/version", "/openapi/v3?x=1"]) {
    const got = info("GET", path);
    assertEquals([got.isResourceRequest, got.verb], [false, "get"], path);
  }
  assertEquals(info("HEAD", "/healthz").verb, "head");
});
