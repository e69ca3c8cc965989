// deno-lint-ignore-file no-explicit-any
/**
 * `--workers=2`: the main thread and one worker thread serve the same port (SO_REUSEPORT), the
 * worker over a store client whose cache the main thread's store feeds. What a user sees:
 * kubectl get/create/watch work; a write acknowledged on one connection is seen by a
 * consistent read on any other (whichever thread serves it); a watch sees every event once,
 * in order; a bad count is refused at start.
 */

import { assert, assertEquals } from "./assert.ts";
import { assertConfigError, runPlatform, testServer } from "./harness.ts";
import { kubectlEnv, liveOutput } from "./kubectl.ts";
import { assertThreadsServed, onNewConnection } from "./threads.ts";

Deno.test("--workers=2: kubectl and clients see one store from every thread", async () => {
  await using env = await kubectlEnv({ workers: 2 });
  const { server } = env;
  // Both threads serve.
  await assertThreadsServed(server, 2);

  await using watch = liveOutput(
    env.spawn(["get", "configmaps", "-n", "default", "-w", "-o", "name"]),
  );
  // Its list is in (the namespace's CA bundle ConfigMap): what follows are watch events.
  await watch.until((lines) => lines.length > 0, "the initial list");
  // A write acknowledged on one connection is in a consistent read on the next, whichever
  // thread each lands on.
  const versions: string[] = [];
  for (let i = 0; i < 20; i++) {
    const created = await onNewConnection(server, "POST", "/api/v1/namespaces/default/configmaps", {
      metadata: { name: `w${i}` },
      data: { i: String(i) },
    });
    assertEquals(created.status, 201, JSON.stringify(created.body));
    const rv = (created.body as any).metadata.resourceVersion;
    versions.push(rv);
    const got = await onNewConnection(server, "GET", `/api/v1/namespaces/default/configmaps/w${i}`);
    assertEquals(got.status, 200, JSON.stringify(got.body));
    assertEquals((got.body as any).metadata.resourceVersion, rv);
    const list = await onNewConnection(server, "GET", "/api/v1/namespaces/default/configmaps");
    const names = (list.body as any).items.map((o: any) => o.metadata.name);
    assert(names.includes(`w${i}`), `w${i} missing from a consistent list: ${names}`);
    assert(Number((list.body as any).metadata.resourceVersion) >= Number(rv));
  }
  // kubectl: its create and get (each its own connections) agree with the above.
  await env.ok(["create", "configmap", "by-kubectl", "-n", "default", "--from-literal=a=b"]);
  assertEquals(
    (await env.ok(["get", "configmap", "by-kubectl", "-n", "default", "-o", "jsonpath={.data.a}"]))
      .trim(),
    "b",
  );
  // The watch: every object added once, in the order written.
  const want = [...Array.from({ length: 20 }, (_, i) => `w${i}`), "by-kubectl"];
  const added = (lines: string[]) =>
    lines.map((l) => l.split("/").at(-1)!).filter((n) => n !== "kube-root-ca.crt");
  await watch.until((lines) => added(lines).length >= want.length, "every ADDED event");
  assertEquals(added(watch.lines), want);
  // A watch from a resourceVersion (served by either thread) resumes exactly after it.
  const from = versions[9];
  const resumed = await onNewConnection(
    server,
    "GET",
    `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${from}&timeoutSeconds=1`,
  );
  const events = (resumed.body as string).trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(
    events.map((e) => e.object.metadata.name),
    [...Array.from({ length: 10 }, (_, i) => `w${i + 10}`), "by-kubectl"],
  );
});

Deno.test("--workers=2: a CRD made on one thread is served by every thread", async () => {
  await using ts = await testServer({ workers: 2 });
  const { server } = ts;
  const crd = await onNewConnection(
    server,
    "POST",
    "/apis/apiextensions.platform.io/v1/customresourcedefinitions",
    {
      apiVersion: "apiextensions.platform.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "gadgets.ops.example.com" },
      spec: {
        group: "ops.example.com",
        scope: "Cluster",
        names: { plural: "gadgets", kind: "Gadget" },
        versions: [{
          name: "v1alpha1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  properties: { size: { type: "integer", minimum: 1, maximum: 10 } },
                },
              },
            },
          },
        }],
      },
    },
  );
  assertEquals(crd.status, 201, JSON.stringify(crd.body));
  // Each thread's CRD controller picks the CRD up from its own store client (as a replica
  // would): wait until 16 connections in a row are served the new resource.
  const gadgets = "/apis/ops.example.com/v1alpha1/gadgets";
  let inARow = 0;
  for (let tries = 0; inARow < 16; tries++) {
    assert(tries < 600, "the custom resource was never served by every thread");
    const res = await onNewConnection(server, "GET", gadgets);
    inARow = res.status === 200 ? inARow + 1 : 0;
    if (res.status !== 200) await new Promise((r) => setTimeout(r, 50));
  }
  for (let i = 0; i < 10; i++) {
    const made = await onNewConnection(server, "POST", gadgets, {
      apiVersion: "ops.example.com/v1alpha1",
      kind: "Gadget",
      metadata: { name: `g${i}` },
      spec: { size: i + 1 },
    });
    assertEquals(made.status, 201, JSON.stringify(made.body));
    const got = await onNewConnection(server, "GET", `${gadgets}/g${i}`);
    assertEquals((got.body as any).spec, { size: i + 1 });
  }
  // Validation by the CRD's schema, whichever thread decides.
  for (let i = 0; i < 4; i++) {
    const bad = await onNewConnection(server, "POST", gadgets, {
      apiVersion: "ops.example.com/v1alpha1",
      kind: "Gadget",
      metadata: { name: `bad${i}` },
      spec: { size: 11 },
    });
    assertEquals(bad.status, 422, JSON.stringify(bad.body));
    assert(JSON.stringify(bad.body).includes("spec.size"), JSON.stringify(bad.body));
  }
});

Deno.test("--workers: a bad count exits 2 naming the flag", async () => {
  assertConfigError(await runPlatform("serve", "--workers=0"), /--workers/);
  assertConfigError(await runPlatform("serve", "--workers=two"), /--workers/);
});
