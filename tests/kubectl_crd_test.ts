/**
 * Custom resources with the real kubectl: apply a CRD, wait for it, apply, get, explain and
 * delete custom resources, then delete the CRD.
 */

import assert from "node:assert/strict";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";

const crdYaml = await Deno.readTextFile(new URL("../testdata/crd/widgets.yaml", import.meta.url));

Deno.test({
  name: "kubectl: custom resources end to end",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using env = await kubectlEnv();
  const { kubectl, ok } = env;

  await t.step("apply the CRD and wait for Established", async () => {
    assert.match(
      await ok(["apply", "-f", "-"], crdYaml),
      /^customresourcedefinition.apiextensions.platform.io\/widgets.ssa.example.com created\n$/,
    );
    await ok([
      "wait",
      "--for=condition=Established",
      "crd/widgets.ssa.example.com",
      "--timeout=20s",
    ]);
    const crds = await ok(["get", "crds"]);
    assert.match(crds, /^NAME\s+CREATED AT\n/);
    assert.match(crds, /\nwidgets.ssa.example.com\s+\d{4}-\d\d-\d\dT/);
  });

  const w1 = `apiVersion: ssa.example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec:
  numeric: 1
  set: [a, b]
  free: {anything: {goes: true}}
`;

  await t.step("apply, get and get -o yaml a widget", async () => {
    assert.match(await ok(["apply", "-f", "-"], w1), /^widget.ssa.example.com\/w1 created\n$/);
    const list = await ok(["get", "widgets"]);
    assert.match(list, /^NAME\s+AGE\n/);
    assert.match(list, /\nw1\s+\d+s\n/);
    const yaml = await ok(["get", "widget", "w1", "-o", "yaml"]);
    assert.match(yaml, /^apiVersion: ssa.example.com\/v1\n/);
    assert.match(yaml, /\nkind: Widget\n/);
    assert.match(yaml, /\n {2}numeric: 1\n/);
    assert.match(yaml, /\n {6}goes: true\n/);
  });

  await t.step("apply a change (merge patch) and a strict unknown field", async () => {
    const out = await ok(["apply", "-f", "-"], w1.replace("numeric: 1", "numeric: 2"));
    assert.match(out, /^widget.ssa.example.com\/w1 configured\n$/);
    const json = JSON.parse(await ok(["get", "widget", "w1", "-o", "json"]));
    assert.equal(json.spec.numeric, 2);
    const bad = await kubectl(
      ["apply", "-f", "-"],
      w1.replace("numeric: 1", "numeric: 1\n  bogus: 1"),
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /unknown field "spec.bogus"/);
    const invalid = await kubectl(["apply", "-f", "-"], w1.replace("numeric: 1", "numeric: one"));
    assert.notEqual(invalid.code, 0);
    assert.match(invalid.stderr, /spec.numeric/);
  });

  await t.step("explain widgets", async () => {
    const out = await ok(["explain", "widgets.spec"]);
    assert.match(out, /KIND:\s+Widget/);
    assert.match(out, /numeric\s+<integer>/);
  });

  await t.step("server-side apply a second widget", async () => {
    const out = await ok(
      ["apply", "--server-side", "-f", "-"],
      w1.replace("name: w1", "name: w2"),
    );
    assert.match(out, /^widget.ssa.example.com\/w2 serverside-applied\n$/);
    assert.match(
      await ok(["get", "widgets", "-o", "name"]),
      /^widget.ssa.example.com\/w1\nwidget.ssa.example.com\/w2\n$/,
    );
  });

  await t.step("delete the CRD: its widgets and endpoints go", async () => {
    assert.match(
      await ok(["delete", "crd", "widgets.ssa.example.com"]),
      // kubectl takes the first spelling discovery lists: Kubernetes'.
      /customresourcedefinition.apiextensions.k8s.io "widgets.ssa.example.com" deleted/,
    );
    using client = Deno.createHttpClient({ caCerts: [env.server.caCertPem] });
    const res = await fetch(`${env.server.url}/apis/ssa.example.com/v1/widgets`, {
      headers: { Authorization: `Bearer ${env.server.adminToken}` },
      client,
    });
    assert.equal(res.status, 404);
    await res.body?.cancel();
  });
});
