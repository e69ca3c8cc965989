/**
 * The STABLE metrics are a contract with whoever scrapes the server (dashboards, alerts): the
 * fixture lists each one's name, type and labels, and this test fails on any rename, relabel
 * or removal, as kube's stability checks do. A deliberate change updates the fixture in the
 * same commit (the deprecation rules of spec 01 say when one is allowed).
 */

import assert from "node:assert/strict";
import { ServerMetrics } from "./mod.ts";

const FIXTURE = new URL("../../testdata/metrics/stable_metrics.txt", import.meta.url);

/** `name type label,label` lines, without comments and blank lines. */
function fixtureLines(text: string): string[] {
  return text.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
}

Deno.test("the STABLE metrics are those of testdata/metrics/stable_metrics.txt", async () => {
  const metrics = new ServerMetrics({ version: "1.32" });
  const declared = metrics.registry.descriptors()
    .filter((d) => d.stability === "STABLE")
    .map((d) => `${d.name} ${d.type} ${d.labels.join(",")}`.trimEnd());
  assert.deepEqual(declared, fixtureLines(await Deno.readTextFile(FIXTURE)));
});

Deno.test("every metric name is valid, and none declared is hidden (hidden ones are deleted)", () => {
  const metrics = new ServerMetrics({ version: "1.32" });
  for (const d of metrics.registry.descriptors()) {
    assert.match(d.name, /^[a-z_][a-z0-9_]*$/, d.name);
    assert.equal(d.hidden, false, `${d.name} is hidden: delete it`);
  }
});
