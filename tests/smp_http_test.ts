// deno-lint-ignore-file no-explicit-any
/**
 * Strategic merge patch over real HTTP: the kubectl-checked vectors of
 * `testdata/smp-vectors.json` whose base is a kind this server serves (v1 ConfigMap, v1
 * Namespace), each as create + `PATCH` (`application/strategic-merge-patch+json`) + `GET`
 * against a real server. The `deploy` vectors stay library-level (`lib/patch/strategic_test.ts`):
 * the server does not serve Deployments. Catalogue: `smp-behaviours.md` (B-numbers, §0 for
 * what changes between a merge result and an HTTP answer).
 */

import { assert, assertEquals } from "./assert.ts";
import { parse } from "yaml";
import { type TestServer, testServer } from "./harness.ts";
import { at, corpus, type Json, type Vector } from "../lib/patch/testing/smp_vectors.ts";

const SMP = { "Content-Type": "application/strategic-merge-patch+json" };

/** The collection each served base kind is created in. */
const COLLECTIONS: Record<string, string> = {
  cm: "/api/v1/namespaces/default/configmaps",
  ns: "/api/v1/namespaces",
};

/** Metadata the server sets on every object; none of it is in the bases or the results. */
const SERVER_METADATA = [
  "namespace",
  "uid",
  "resourceVersion",
  "creationTimestamp",
  "generation",
  "managedFields",
  "selfLink",
];

/**
 * Vectors whose result cannot be observed over HTTP because the server, correctly, does not let
 * the PATCH change the field. Both patch Namespace `spec.finalizers`, which Kubernetes only
 * changes through `PUT .../namespaces/<name>/finalize` (the main resource keeps the stored
 * value; `/finalize` takes no PATCH in Kubernetes). The merge itself is covered by the library
 * test; here they are checked to leave `spec.finalizers` unchanged instead (see the last step).
 */
const NOT_OVER_HTTP: Record<string, string> = {
  "prim-list-no-strategy-replaced": "spec.finalizers changes only through /finalize",
  "delete-from-prim-list-non-merge-list": "spec.finalizers changes only through /finalize",
};

/** Status codes of the error vectors. Kubernetes answers both with a bare 500 (catalogue §0);
 * this server answers 400 (`lib/patch/strategic.ts`). */
const ERROR_STATUS: Record<string, number> = {
  "invalid-patch-directive": 400,
  "set-order-prim-bad-format": 400,
};

/** The base object to create: server fields stripped, a fresh name. */
function baseObject(v: Vector, name: string): Json {
  const obj = structuredClone(corpus.bases[v.base]);
  for (const key of SERVER_METADATA) delete obj.metadata[key];
  delete obj.status;
  obj.metadata.name = name;
  return obj;
}

/** The object as the merge result shows it: server-set metadata removed, the base's name back. */
function asMergeResult(obj: Json, v: Vector): Json {
  const out = structuredClone(obj);
  for (const key of SERVER_METADATA) delete out.metadata?.[key];
  if (out.metadata) out.metadata.name = corpus.bases[v.base].metadata.name;
  return out;
}

function isEmptyMap(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.keys(value).length === 0;
}

/**
 * Asserts the vector's sub-paths on `obj`. A map the patch leaves empty (`{}` in the vector) may
 * also be absent: Kubernetes decodes the merge result into the typed object, and the `omitempty`
 * maps used here (`ConfigMap.data`, `metadata.annotations`) are then left out (catalogue §0 (a)).
 */
function assertExpected(obj: Json, v: Vector, what: string): void {
  const view = asMergeResult(obj, v);
  for (const [path, want] of Object.entries(v.expect!)) {
    const got = at(view, path);
    if (isEmptyMap(want) && got === undefined) continue;
    assertEquals(got, want === null ? undefined : want, `${what} ${path}`);
  }
}

async function create(ts: TestServer, v: Vector, name: string): Promise<Json> {
  const res = await ts.json("POST", COLLECTIONS[v.base], { body: baseObject(v, name) });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

const served = corpus.vectors.filter((v) => v.base in COLLECTIONS);

Deno.test("smp over http: the corpus has 23 vectors on served kinds (21 ConfigMap, 2 Namespace)", () => {
  assertEquals(corpus.vectors.length, 51);
  assertEquals(served.filter((v) => v.base === "cm").length, 21);
  assertEquals(served.filter((v) => v.base === "ns").length, 2);
  for (const id of [...Object.keys(NOT_OVER_HTTP), ...Object.keys(ERROR_STATUS)]) {
    assert(served.some((v) => v.id === id), `no vector ${id}`);
  }
  for (const v of served.filter((v) => v.expectError !== undefined)) {
    assert(v.id in ERROR_STATUS, `no status for error vector ${v.id}`);
  }
});

Deno.test("smp over http: the ConfigMap and Namespace vectors", async (t) => {
  await using ts = await testServer();

  // The vectors that cannot go over HTTP are checked by the last step instead.
  for (const v of served.filter((v) => !(v.id in NOT_OVER_HTTP))) {
    await t.step({
      name: v.id,
      fn: async () => {
        const name = `smp-${v.id}`;
        const path = `${COLLECTIONS[v.base]}/${name}`;
        const created = await create(ts, v, name);
        const res = await ts.json("PATCH", path, { headers: SMP, body: v.patch });
        const got = await ts.json("GET", path);
        assertEquals(got.status, 200);

        if (v.expectError !== undefined) {
          const code = ERROR_STATUS[v.id];
          assertEquals(res.status, code, JSON.stringify(res.body));
          assertEquals(res.body.kind, "Status");
          assertEquals(res.body.code, code);
          assertEquals(res.body.reason, "BadRequest");
          assert(
            res.body.message.includes(v.expectError),
            `${JSON.stringify(res.body.message)} lacks ${JSON.stringify(v.expectError)}`,
          );
          // Nothing was written.
          assertEquals(got.body.metadata.resourceVersion, created.metadata.resourceVersion);
          assertEquals(got.body, created);
          return;
        }

        assertEquals(res.status, 200, JSON.stringify(res.body));
        assertExpected(res.body, v, "PATCH response");
        assertExpected(got.body, v, "GET");
        // What was answered is what is stored.
        assertEquals(got.body, res.body);
        // A patch that changes nothing writes nothing; any other change is a new revision.
        const changed = JSON.stringify(asMergeResult(res.body, v)) !==
          JSON.stringify(asMergeResult(created, v));
        const rv = (o: Json) => BigInt(o.metadata.resourceVersion);
        if (changed) {
          assert(rv(res.body) > rv(created), "a change without a new resourceVersion");
        } else {
          assertEquals(res.body.metadata.resourceVersion, created.metadata.resourceVersion);
        }
      },
    });
  }

  await t.step("the Namespace vectors leave spec.finalizers to /finalize", async () => {
    for (const v of served.filter((v) => v.id in NOT_OVER_HTTP)) {
      const name = `smp-${v.id}`;
      const created = await create(ts, v, name);
      assertEquals(created.spec.finalizers, corpus.bases.ns.spec.finalizers);
      const res = await ts.json("PATCH", `${COLLECTIONS.ns}/${name}`, {
        headers: SMP,
        body: v.patch,
      });
      assertEquals(res.status, 200, JSON.stringify(res.body));
      assertEquals(res.body.spec.finalizers, corpus.bases.ns.spec.finalizers, v.id);
      assertEquals(res.body.metadata.resourceVersion, created.metadata.resourceVersion, v.id);
      const got = await ts.json("GET", `${COLLECTIONS.ns}/${name}`);
      assertEquals(got.body.spec.finalizers, corpus.bases.ns.spec.finalizers, v.id);
    }
  });
});

// ---- custom resources ----

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const WIDGETS = "/apis/ssa.example.com/v1/namespaces/default/widgets";

Deno.test("smp over http: a custom resource answers 415 listing the patch types it accepts", async () => {
  await using ts = await testServer();
  const crd = parse(
    await Deno.readTextFile(new URL("../testdata/crd/widgets.yaml", import.meta.url)),
  ) as Json;
  assertEquals((await ts.json("POST", CRDS, { body: crd })).status, 201);
  let established = false;
  for (let i = 0; i < 100 && !established; i++) {
    const res = await ts.json("GET", `${CRDS}/${crd.metadata.name}`);
    established = (res.body.status?.conditions ?? []).some((c: any) =>
      c.type === "Established" && c.status === "True"
    );
    if (!established) await new Promise((r) => setTimeout(r, 50));
  }
  assert(established, "the CRD was never established");

  const created = await ts.json("POST", WIDGETS, {
    body: {
      apiVersion: "ssa.example.com/v1",
      kind: "Widget",
      metadata: { name: "w" },
      spec: { string: "a" },
    },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));

  const res = await ts.json("PATCH", `${WIDGETS}/w`, {
    headers: SMP,
    body: { spec: { string: "b" } },
  });
  assertEquals(res.status, 415);
  assertEquals(res.body.kind, "Status");
  assertEquals(res.body.reason, "UnsupportedMediaType");
  assertEquals(res.body.code, 415);
  // Kubernetes' text, listing json-patch, merge-patch and apply-patch: no strategic merge patch.
  assertEquals(
    res.body.message,
    "the body of the request was in an unknown format - accepted media types include: " +
      "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
  );

  const got = await ts.json("GET", `${WIDGETS}/w`);
  assertEquals(got.body.spec, { string: "a" });
  assertEquals(got.body.metadata.resourceVersion, created.body.metadata.resourceVersion);
});
