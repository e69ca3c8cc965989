import assert from "node:assert/strict";
import type { StorageConversion } from "../registry/mod.ts";
import { conversionOf, noneConversion } from "./conversion.ts";
import { conversionClient } from "./conversion_webhook.ts";
import { validateConversion } from "./conversion_validation.ts";

const versions = (...names: string[]) =>
  names.map((name, i) => ({ name, served: true, storage: i === names.length - 1 }));

Deno.test("conversion: a CRD with one version needs none", () => {
  const crd = { spec: { group: "g.example.com", versions: versions("v1") } };
  assert.equal(conversionOf(crd, "v1", { client: conversionClient() }), undefined);
});

Deno.test("conversion: None rewrites apiVersion both ways, to the storage version on write", () => {
  const crd = { spec: { group: "g.example.com", versions: versions("v1beta1", "v1") } };
  const c = conversionOf(crd, "v1beta1", { client: conversionClient() }) as StorageConversion;
  const stored = { apiVersion: "g.example.com/v1", kind: "K", spec: { a: 1 } };
  assert.deepEqual(c.fromStorage(structuredClone(stored)), {
    ...stored,
    apiVersion: "g.example.com/v1beta1",
  });
  const written = { apiVersion: "g.example.com/v1beta1", kind: "K", spec: { a: 2 } };
  assert.deepEqual(c.toStorage(written), { ...written, apiVersion: "g.example.com/v1" });
  assert.equal(written.apiVersion, "g.example.com/v1beta1", "the input is not changed");
  const none = noneConversion("g/v2", "g/v1");
  assert.equal(none.fromStorage({ apiVersion: "g/v0" }).apiVersion, "g/v2");
});

Deno.test("conversion: spec.conversion is checked with kube's messages", () => {
  const msgs = (c: unknown) => validateConversion(c).map((e) => `${e.field}: ${e.detail}`);
  assert.deepEqual(msgs({ strategy: "None" }), []);
  assert.deepEqual(msgs({ strategy: "Other" }), [
    'spec.conversion.strategy: supported values: "None", "Webhook"',
  ]);
  assert.deepEqual(msgs({ strategy: "None", webhook: {} }), [
    "spec.conversion.webhook: should not be set when strategy is not set to Webhook",
  ]);
  assert.deepEqual(msgs({ strategy: "Webhook", webhook: { conversionReviewVersions: ["v1"] } }), [
    "spec.conversion.webhook.clientConfig: required when strategy is set to Webhook",
  ]);
  assert.deepEqual(
    msgs({
      strategy: "Webhook",
      webhook: {
        clientConfig: { url: "https://u:p@x.example/c?q=1#f", service: { name: "s" } },
      },
    }),
    [
      "spec.conversion.webhook.clientConfig: exactly one of url or service is required",
      "spec.conversion.webhook.conversionReviewVersions: must specify one of v1, v1beta1",
    ],
  );
  assert.deepEqual(
    msgs({
      strategy: "Webhook",
      webhook: {
        conversionReviewVersions: ["v1beta1"],
        clientConfig: { url: "https://u:p@x.example/c?q=1#f", caBundle: btoa("not pem") },
      },
    }),
    [
      "spec.conversion.webhook.clientConfig.url: user information is not permitted in the URL",
      "spec.conversion.webhook.clientConfig.url: fragments are not permitted in the URL",
      "spec.conversion.webhook.clientConfig.url: query parameters are not permitted in the URL",
      "spec.conversion.webhook.clientConfig.caBundle: must be PEM-encoded certificates: no CERTIFICATE block found",
    ],
  );
});
