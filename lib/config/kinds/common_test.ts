import assert from "node:assert/strict";
import { formatGoDuration, parseGoDuration } from "./common.ts";
import { checkKindDocument } from "./registry.ts";

Deno.test("Go durations: parsed as Go parses them, written as kube writes them", () => {
  assert.equal(parseGoDuration("1h30m"), 5_400_000);
  assert.equal(parseGoDuration("-1.5s"), -1500);
  assert.equal(parseGoDuration("0"), 0);
  assert.equal(parseGoDuration("5"), undefined);
  assert.equal(parseGoDuration("abc"), undefined);
  assert.deepEqual(
    [0, 500, 15_000, 60_000, 90_500, 8760 * 3_600_000, -3_600_000].map(formatGoDuration),
    ["0s", "500ms", "15s", "1m0s", "1m30.5s", "8760h0m0s", "-1h0m0s"],
  );
});

Deno.test("shape problems in kube's words: missing, not an integer, out of range, unknown", () => {
  const errors = checkKindDocument({
    apiVersion: "kubescheduler.config.k8s.io/v1",
    kind: "KubeSchedulerConfiguration",
    parallelism: 1.5,
    percentageOfNodesToScore: 3_000_000_000,
    podMaxBackoffSeconds: 1e20,
    profiles: [{ plugins: { filter: { enabled: [{ weight: 1 }] } } }],
    extenders: [{ tlsConfig: 5, urlprefix: "x" }],
  }).errors;
  assert.deepEqual(errors, [
    "parallelism: Invalid value: 1.5: must be an integer",
    "percentageOfNodesToScore: Invalid value: 3000000000: must be a 32-bit integer (-2147483648 to 2147483647)",
    "podMaxBackoffSeconds: Invalid value: 100000000000000000000: must be a 64-bit integer",
    "profiles[0].plugins.filter.enabled[0].name: Required value",
    "extenders[0].tlsConfig: Invalid value: 5: must be a mapping",
    "extenders[0].urlprefix: unknown field",
  ]);
});
