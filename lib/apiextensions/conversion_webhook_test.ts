// deno-lint-ignore-file no-explicit-any
import assert from "node:assert/strict";
import { StatusError } from "../api/mod.ts";
import { startTestWebhook } from "../admission/webhook/webhook_testdata.ts";
import { conversionClient, ConversionWebhook } from "./conversion_webhook.ts";

const thing = (name: string, spec: unknown) => ({
  apiVersion: "g.example.com/v1",
  kind: "Thing",
  metadata: { name, uid: `uid-${name}`, labels: { a: "1" } },
  spec,
});

async function setUp() {
  const hook = await startTestWebhook();
  const client = conversionClient();
  const crd = {
    metadata: { name: "things.g.example.com" },
    spec: {
      conversion: {
        strategy: "Webhook",
        webhook: {
          conversionReviewVersions: ["v2", "v1"],
          clientConfig: { url: `${hook.url}/c`, caBundle: hook.caBundle },
        },
      },
    },
  };
  return { hook, client, webhook: new ConversionWebhook(crd, { client }) };
}

async function failure(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => undefined, (e) => e);
  assert.ok(err instanceof StatusError, `expected a StatusError, got ${err}`);
  assert.equal(err.code, 500);
  return err.message;
}

Deno.test("conversion webhook: a batch in one review, metadata kept but labels", async () => {
  const { hook, client, webhook } = await setUp();
  try {
    hook.respond = (review: any) =>
      Response.json({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        response: {
          uid: review.request.uid,
          result: { status: "Success" },
          convertedObjects: review.request.objects.map((o: any) => ({
            ...o,
            apiVersion: review.request.desiredAPIVersion,
            metadata: { name: "renamed", labels: { b: "2" } },
          })),
        },
      });
    const out = await webhook.convert(
      [thing("x", { n: 1 }), thing("y", { n: 2 })],
      "g.example.com/v2",
    );
    assert.equal(hook.received.length, 1);
    assert.equal(hook.received[0].review.apiVersion, "apiextensions.platform.io/v1");
    assert.equal(hook.received[0].review.request.objects.length, 2);
    assert.deepEqual(out.map((o) => [o.apiVersion, o.metadata, o.spec]), [
      ["g.example.com/v2", { name: "x", uid: "uid-x", labels: { b: "2" } }, { n: 1 }],
      ["g.example.com/v2", { name: "y", uid: "uid-y", labels: { b: "2" } }, { n: 2 }],
    ]);
  } finally {
    client.close();
    await hook[Symbol.asyncDispose]();
  }
});

Deno.test("conversion webhook: bad answers are kube's 500s", async () => {
  const { hook, client, webhook } = await setUp();
  const prefix = "Internal error occurred: conversion webhook for g.example.com/v1, Kind=Thing";
  try {
    const reply = (
      response: (r: any) => unknown,
    ) => (hook.respond = (review: any) =>
      Response.json({
        apiVersion: "apiextensions.platform.io/v1",
        kind: "ConversionReview",
        response: response(review.request),
      }));
    reply(() => ({ uid: "other", result: { status: "Success" }, convertedObjects: [] }));
    assert.match(
      await failure(webhook.convert([thing("x", {})], "g.example.com/v2")),
      new RegExp(`^${prefix} failed: expected response.uid="[0-9a-f-]+", got "other"$`),
    );
    reply((r) => ({ uid: r.uid, result: { status: "Failure" } }));
    assert.equal(
      await failure(webhook.convert([thing("x", {})], "g.example.com/v2")),
      `${prefix} failed: response.result.status was 'Failure', not 'Success'`,
    );
    reply((r) => ({ uid: r.uid, result: { status: "Success" }, convertedObjects: [] }));
    assert.equal(
      await failure(webhook.convert([thing("x", {})], "g.example.com/v2")),
      `${prefix} returned 0 objects, expected 1`,
    );
    reply((r) => ({ uid: r.uid, result: { status: "Success" }, convertedObjects: r.objects }));
    assert.equal(
      await failure(webhook.convert([thing("x", {})], "g.example.com/v2")),
      `${prefix} returned invalid object: invalid apiVersion "g.example.com/v1", expected "g.example.com/v2"`,
    );
  } finally {
    client.close();
    await hook[Symbol.asyncDispose]();
  }
});
