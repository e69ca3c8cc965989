import assert from "node:assert/strict";
import { parseTracingConfig } from "./tracing_config.ts";

const HEAD = "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\n";

Deno.test("TracingConfiguration: kube's defaults and every apiVersion spelling", () => {
  assert.deepEqual(parseTracingConfig(HEAD, "t.yaml"), {
    endpoint: "localhost:4317",
    samplingRatePerMillion: 0,
  });
  for (const v of ["apiserver.platform.io/v1beta1", "apiserver.config.k8s.io/v1"]) {
    const text = `apiVersion: ${v}\nkind: TracingConfiguration\nendpoint: otel:4317\n` +
      "samplingRatePerMillion: 1000000\n";
    assert.deepEqual(parseTracingConfig(text, "t.yaml"), {
      endpoint: "otel:4317",
      samplingRatePerMillion: 1_000_000,
    });
  }
});

Deno.test("TracingConfiguration: every problem at once, each with its field path", () => {
  const text = "apiVersion: apiserver.config.k8s.io/v2\nkind: TracingConfiguration\n" +
    "endpoint: https://otel:4317\nsamplingRatePerMillion: 1.5\nsampling: 3\n";
  assert.throws(() => parseTracingConfig(text, "t.yaml"), (err: Error) => {
    assert.deepEqual(err.message.split("\n").sort(), [
      't.yaml: apiVersion: expected one of "apiserver.platform.io/v1beta1", ' +
      '"apiserver.platform.io/v1", "apiserver.config.k8s.io/v1alpha1", ' +
      '"apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1", got ' +
      '"apiserver.config.k8s.io/v2"',
      't.yaml: endpoint: Invalid value: "https://otel:4317": unsupported scheme: https. ' +
      "Options are none, dns or unix",
      "t.yaml: sampling: unknown field",
      "t.yaml: samplingRatePerMillion: expected an integer, got 1.5",
    ]);
    return true;
  });
  assert.throws(() => parseTracingConfig("", "t.yaml"), /t\.yaml: the file is empty/);
});
