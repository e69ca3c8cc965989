import assert from "node:assert/strict";
import { ConfigError } from "../config/mod.ts";
import { parseRuntimeConfig } from "../config/runtime_config.ts";
import { builtinDefinitions } from "../resources/mod.ts";
import { rbacAuthorizes, rbacServed, servedDefinitions } from "./served_apis.ts";

const all = builtinDefinitions();
const served = (text: string, rbac = true) =>
  servedDefinitions(all, parseRuntimeConfig(text), { rbacAuthorizes: rbac }).map((d) =>
    `${d.group}/${d.plural}`
  );

Deno.test("servedDefinitions leaves out what the runtime config turns off, in order", () => {
  // Stable versions only: the beta one is off until the runtime config turns it on.
  assert.deepEqual(
    served(""),
    all.filter((d) => d.version === "v1").map((d) => `${d.group}/${d.plural}`),
  );
  const beta = (rc: string) =>
    servedDefinitions(all, parseRuntimeConfig(rc), { rbacAuthorizes: true })
      .filter((d) => d.version === "v1beta1").map((d) => `${d.group}/${d.plural}`);
  assert.deepEqual(beta(""), []);
  assert.deepEqual(beta("api/beta=true"), ["authentication.platform.io/selfsubjectreviews"]);
  assert.deepEqual(beta("authentication.k8s.io/v1beta1"), [
    "authentication.platform.io/selfsubjectreviews",
  ]);
  const noLeases = served("coordination.k8s.io/v1=false");
  assert.equal(noLeases.length, served("").length - 1);
  assert(!noLeases.includes("coordination.platform.io/leases"));
  assert.deepEqual(
    served("api/all=false,v1=true,coordination.platform.io/v1/leases=true", false),
    // Every core resource, in catalogue order, then the one resource turned back on.
    all.filter((d) => d.group === "" || d.plural === "leases").map((d) => `${d.group}/${d.plural}`),
  );
});

Deno.test("servedDefinitions refuses what the server needs, in one line each", () => {
  const refused = (text: string, rbac = true) => {
    try {
      served(text, rbac);
    } catch (err) {
      assert(err instanceof ConfigError);
      assert(!err.message.includes("\n"));
      return err.message;
    }
    return "";
  };
  assert.match(refused("api/ga=false"), /v1 \(the core API\) cannot be disabled/);
  assert.match(refused("v1/namespaces=false"), /v1\/namespaces cannot be disabled/);
  assert.match(refused("rbac.authorization.platform.io/v1/clusterroles=false"), /clusterroles/);
  assert.equal(refused("rbac.authorization.platform.io/v1/clusterroles=false", false), "");
  assert.match(refused("foo.example/v1=false"), /unknown group\/version "foo\.example\/v1"/);
});

Deno.test("rbacServed and rbacAuthorizes", () => {
  assert.equal(rbacServed(all), true);
  assert.equal(
    rbacServed(
      servedDefinitions(all, parseRuntimeConfig("rbac.authorization.k8s.io/v1/roles=false"), {
        rbacAuthorizes: false,
      }),
    ),
    false,
  );
  assert.equal(rbacAuthorizes(undefined), true);
  assert.equal(rbacAuthorizes({ authorizers: [{ type: "AlwaysAllow", name: "a" }] }), false);
  assert.equal(rbacAuthorizes({ authorizers: [{ type: "RBAC", name: "r" }] }), true);
});
