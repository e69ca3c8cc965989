import assert from "node:assert/strict";
import { ConfigError } from "./config_error.ts";
import {
  isEnabled,
  normalizeRuntimeConfigKey,
  parseRuntimeConfig,
  validateRuntimeConfig,
  versionStage,
} from "./runtime_config.ts";

Deno.test("parseRuntimeConfig reads key[=value] with true as the default value", () => {
  assert.deepEqual(
    parseRuntimeConfig("api/all=false, v1 ,apps/v1=true,batch/v1/jobs=false,api/v1/pods=FALSE"),
    new Map([
      ["api/all", false],
      ["v1", true],
      ["apps/v1", true],
      ["batch/v1/jobs", false],
      ["v1/pods", false],
    ]),
  );
  assert.deepEqual(parseRuntimeConfig(""), new Map());
  assert.deepEqual(parseRuntimeConfig("api/beta,api/beta=false"), new Map([["api/beta", false]]));
});

Deno.test("parseRuntimeConfig rejects bad keys and values", () => {
  assert.throws(
    () => parseRuntimeConfig("apps/v1=yes"),
    new ConfigError('apps/v1: "yes" is not a boolean (true or false)'),
  );
  for (
    const bad of ["apps", "api/none", "apps/v1/deployments/status", "Apps/v1", "apps/1", "/v1"]
  ) {
    assert.throws(() => parseRuntimeConfig(bad), /is not a runtime-config key/, bad);
  }
});

Deno.test("normalizeRuntimeConfigKey", () => {
  assert.equal(normalizeRuntimeConfigKey("api/v1"), "v1");
  assert.equal(normalizeRuntimeConfigKey("v1"), "v1");
  assert.equal(normalizeRuntimeConfigKey("v1/configmaps"), "v1/configmaps");
  assert.equal(
    normalizeRuntimeConfigKey("certificates.platform.io/v1beta1"),
    "certificates.platform.io/v1beta1",
  );
  assert.equal(normalizeRuntimeConfigKey("api/alpha"), "api/alpha");
  assert.equal(versionStage("v1"), "ga");
  assert.equal(versionStage("v2beta3"), "beta");
  assert.equal(versionStage("v1alpha1"), "alpha");
});

Deno.test("validateRuntimeConfig names unknown group/versions and resources", () => {
  const known = {
    groupVersions: ["v1", "apps/v1", "certificates.platform.io/v1"],
    resources: ["v1/pods", "apps/v1/deployments"],
  };
  const ok = parseRuntimeConfig("api/all=false,v1,apps/v1,v1/pods=false,apps/v1/deployments");
  assert.deepEqual(validateRuntimeConfig(ok, known), []);
  const bad = parseRuntimeConfig("foo.io/v1,apps/v2,apps/v1/widgets,v1/nothings,api/beta");
  assert.deepEqual(validateRuntimeConfig(bad, known), [
    'unknown group/version "foo.io/v1"',
    'unknown group/version "apps/v2"',
    'unknown resource "apps/v1/widgets"',
    'unknown resource "v1/nothings"',
  ]);
});

Deno.test("isEnabled: resource > group/version > api/<stage> > api/all > default", () => {
  const none = new Map<string, boolean>();
  assert.equal(isEnabled(none, "", "v1"), true);
  assert.equal(isEnabled(none, "apps", "v1", "deployments"), true);
  assert.equal(isEnabled(none, "certificates.platform.io", "v1beta1"), false);
  assert.equal(isEnabled(none, "x.io", "v1alpha1"), false);

  const rc = parseRuntimeConfig(
    "api/all=false,api/beta=true,apps/v1=true,apps/v1/replicasets=false,batch/v1beta1=false," +
      "batch/v1/cronjobs=true,v1/pods",
  );
  assert.equal(isEnabled(rc, "", "v1"), false); // api/all
  assert.equal(isEnabled(rc, "", "v1", "pods"), true); // resource beats api/all
  assert.equal(isEnabled(rc, "apps", "v1"), true); // group/version beats api/all
  assert.equal(isEnabled(rc, "apps", "v1", "deployments"), true);
  assert.equal(isEnabled(rc, "apps", "v1", "replicasets"), false); // resource beats gv
  assert.equal(isEnabled(rc, "policy", "v1beta1"), true); // api/beta beats api/all
  assert.equal(isEnabled(rc, "batch", "v1beta1"), false); // gv beats api/beta
  assert.equal(isEnabled(rc, "batch", "v1"), false);
  assert.equal(isEnabled(rc, "batch", "v1", "cronjobs"), true);
  assert.equal(isEnabled(rc, "x.io", "v1alpha1"), false);

  const ga = parseRuntimeConfig("api/ga=false,api/all=true");
  assert.equal(isEnabled(ga, "apps", "v1"), false); // api/ga beats api/all
  assert.equal(isEnabled(ga, "x.io", "v1alpha1"), true);
});

Deno.test("runtime-config keys take either spelling of a built-in group", () => {
  assert.equal(normalizeRuntimeConfigKey("coordination.k8s.io/v1"), "coordination.platform.io/v1");
  assert.equal(
    normalizeRuntimeConfigKey("rbac.authorization.k8s.io/v1/roles"),
    "rbac.authorization.platform.io/v1/roles",
  );
  // Other groups ending in k8s.io have one spelling.
  assert.equal(normalizeRuntimeConfigKey("widgets.k8s.io/v1"), "widgets.k8s.io/v1");
  assert.deepEqual(
    parseRuntimeConfig("coordination.k8s.io/v1=false,coordination.platform.io/v1=true"),
    new Map([["coordination.platform.io/v1", true]]),
  );
});

Deno.test("api/legacy is accepted and changes nothing, as in kube", () => {
  const rc = parseRuntimeConfig("api/legacy=false");
  assert.deepEqual(rc, new Map([["api/legacy", false]]));
  assert.deepEqual(validateRuntimeConfig(rc, { groupVersions: ["v1"], resources: [] }), []);
  assert.equal(isEnabled(rc, "", "v1"), true);
});
