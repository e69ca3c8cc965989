/**
 * Issue 17, decoding: request bodies decode in linear time and nest at most MAX_NESTING_DEPTH
 * levels on every decoder and endpoint (400, never a 500 or a stalled server); YAML reports
 * repeated keys as JSON does; names refuse control characters; log lines carry none.
 */

import { assert, assertEquals, assertMatch } from "../assert.ts";
import { testServer } from "../harness.ts";
import { createLogger } from "../../lib/api/log.ts";
import { MAX_NESTING_DEPTH } from "../../lib/api/nesting.ts";
import { openCrd } from "../open_crd.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const YAML = { "Content-Type": "application/yaml" };

/** Fails when `work` has not finished after `ms`: a guard against a hang, not a timing test. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, guard]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("decoding: a YAML body of ~3 MiB with 125,000 keys is answered", async () => {
  await using ts = await testServer();
  const lines: string[] = [];
  for (let i = 0; lines.length < 125_000; i++) lines.push(`  key${i}: value-${i}`);
  const body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n${
    lines.join("\n")
  }\n`;
  assert(body.length > 2.5 * 2 ** 20 && body.length < 3 * 2 ** 20, `${body.length} bytes`);
  // The yaml package took minutes on this; the limit is generous for slow CI machines.
  const res = await within(120_000, ts.json("POST", CM, { headers: YAML, body }));
  // Decoded: then refused by validation, as the data is over ConfigMap's 1 MiB.
  assertEquals([res.status, res.body.reason], [422, "Invalid"]);
});

Deno.test("decoding: repeated YAML keys are reported by fieldValidation as JSON ones are", async () => {
  await using ts = await testServer();
  const body = "metadata:\n  name: y\n  name: y\ndata:\n  k: a\n  k: b\n";
  const strict = await ts.json("POST", `${CM}?fieldValidation=Strict`, { headers: YAML, body });
  assertEquals(strict.status, 400);
  assertMatch(
    strict.body.message,
    /strict decoding error: duplicate field "metadata\.name", duplicate field "data\.k"$/,
  );
  const warned = await ts.json("POST", CM, { headers: YAML, body });
  assertEquals(warned.status, 201);
  assertEquals(warned.body.data, { k: "b" }, "the last value wins, as in JSON");
  assertEquals(
    warned.headers.get("warning"),
    '299 - "duplicate field \\"metadata.name\\"", 299 - "duplicate field \\"data.k\\""',
  );
  const apply = await ts.json(
    "PATCH",
    `${CM}/y?fieldManager=me&force=true&fieldValidation=Strict`,
    {
      headers: { "Content-Type": "application/apply-patch+yaml" },
      body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: a\n  k: c\n",
    },
  );
  assertEquals(apply.status, 400);
  assertMatch(apply.body.message, /duplicate field "data\.k"/);
});

Deno.test("decoding: nesting past the limit is 400 on every decoder and endpoint", async (t) => {
  await using ts = await testServer();
  assertEquals((await ts.json("POST", CM, { body: { metadata: { name: "c" } } })).status, 201);
  const deepJson = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
  const deepYaml = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
  const cases: [string, string, string, Record<string, string>, string][] = [];
  for (const n of [MAX_NESTING_DEPTH, 20_000]) {
    const json = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"x":${
      deepJson(n)
    }}`;
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nx: ${deepYaml(n)}\n`;
    const ct = (type: string) => ({ "Content-Type": type });
    cases.push(
      [`create JSON ${n}`, "POST", CM, ct("application/json"), json],
      [`create YAML ${n}`, "POST", CM, ct("application/yaml"), yaml],
      [`update JSON ${n}`, "PUT", `${CM}/c`, ct("application/json"), json],
      [`update YAML ${n}`, "PUT", `${CM}/c`, ct("application/yaml"), yaml],
      [`merge patch ${n}`, "PATCH", `${CM}/c`, ct("application/merge-patch+json"), json],
      [
        `strategic patch ${n}`,
        "PATCH",
        `${CM}/c`,
        ct("application/strategic-merge-patch+json"),
        json,
      ],
      [
        `JSON patch ${n}`,
        "PATCH",
        `${CM}/c`,
        ct("application/json-patch+json"),
        `[{"op":"add","path":"/x","value":${deepJson(n)}}]`,
      ],
      [
        `apply JSON ${n}`,
        "PATCH",
        `${CM}/c?fieldManager=me`,
        ct("application/apply-patch+yaml"),
        json,
      ],
      [
        `apply YAML ${n}`,
        "PATCH",
        `${CM}/c?fieldManager=me`,
        ct("application/apply-patch+yaml"),
        yaml,
      ],
      [
        `access review ${n}`,
        "POST",
        "/apis/authorization.platform.io/v1/selfsubjectaccessreviews",
        ct("application/json"),
        `{"kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"get"}},"x":${
          deepJson(n)
        }}`,
      ],
      [
        `delete options ${n}`,
        "DELETE",
        `${CM}/c`,
        ct("application/json"),
        `{"kind":"DeleteOptions","x":${deepJson(n)}}`,
      ],
    );
  }
  for (const [name, method, path, headers, body] of cases) {
    await t.step(name, async () => {
      const res = await ts.json(method, path, { headers, body });
      assertEquals([res.status, res.body.reason], [400, "BadRequest"], res.body.message);
      assertMatch(res.body.message, /exceeded max depth/);
    });
  }
  assertEquals((await ts.json("GET", `${CM}/c`)).status, 200, "nothing deleted it");
});

Deno.test("decoding: a JSON patch may not make a stored object too deep", async () => {
  await using ts = await testServer();
  const crd = openCrd("deep.example.com", "blobs", "Blob");

  assertEquals(
    (await ts.json("POST", "/apis/apiextensions.platform.io/v1/customresourcedefinitions", {
      body: crd,
    })).status,
    201,
  );
  const blobs = "/apis/deep.example.com/v1/namespaces/default/blobs";
  const half = MAX_NESTING_DEPTH - 100;
  const chain = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
  const body = `{"apiVersion":"deep.example.com/v1","kind":"Blob","metadata":{"name":"b"},"d":${
    chain(half)
  }}`;
  let created = await ts.json("POST", blobs, { body });
  for (let i = 0; created.status === 404 && i < 100; i++) { // until the CRD is served
    await new Promise((r) => setTimeout(r, 50));
    created = await ts.json("POST", blobs, { body });
  }
  assertEquals(created.status, 201);
  // Each body is within the limit; the patched object would be nested ~1800 levels.
  const path = `/d${"/a".repeat(half - 1)}`;
  const patched = await ts.json("PATCH", `${blobs}/b`, {
    headers: { "Content-Type": "application/json-patch+json" },
    body: `[{"op":"replace","path":"${path}","value":${chain(half)}}]`,
  });
  assertEquals([patched.status, patched.body.reason], [400, "BadRequest"], patched.body.message);
  assertMatch(patched.body.message, /the patched object exceeded max depth of \d+/);
});

Deno.test("decoding: names with NUL or control characters are refused, never a 500", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    await using ts = await testServer({ storage: "file", dataDir });
    const roles = "/apis/rbac.authorization.platform.io/v1/clusterroles";
    const surrogate = await ts.json("POST", roles, {
      body: '{"metadata":{"name":"a\\ud800b"},"rules":[]}',
    });
    assertEquals(surrogate.status, 422);
    assertMatch(surrogate.body.message, /may not contain unpaired surrogates/);
    for (const name of ["a\u0000b", "a\nb", "a\u001b[31mb"]) {
      const created = await ts.json("POST", roles, { body: { metadata: { name }, rules: [] } });
      assertEquals(created.status, 422, JSON.stringify(name));
      assertMatch(created.body.message, /metadata\.name: Invalid value: .*may not contain/);
      const put = await ts.json("PUT", `${roles}/${encodeURIComponent(name)}`, {
        body: { metadata: { name }, rules: [] },
      });
      assertEquals(put.status, 422, JSON.stringify(name));
      const got = await ts.json("GET", `${roles}/${encodeURIComponent(name)}`);
      assertEquals(got.status, 404, JSON.stringify(name));
    }
    const csr = await ts.json(
      "POST",
      "/apis/certificates.platform.io/v1/certificatesigningrequests",
      {
        body: { metadata: { generateName: "x\u0000" }, spec: {} },
      },
    );
    assertEquals(csr.status, 422);
    assertMatch(csr.body.message, /metadata\.generateName: Invalid value: .*control characters/);
    for (const path of [`${CM}/a%00b`, "/api/v1/namespaces/a%00b/configmaps/x"]) {
      for (const method of ["GET", "DELETE", "PATCH"]) {
        const res = await ts.json(method, path, {
          headers: { "Content-Type": "application/merge-patch+json" },
          body: method === "PATCH" ? "{}" : undefined,
        });
        assert(res.status >= 400 && res.status < 500, `${method} ${path}: ${res.status}`);
      }
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("decoding: log lines carry no control characters from requests", async () => {
  const dataDir = await Deno.makeTempDir();
  const lines: string[] = [];
  try {
    await using ts = await testServer({
      storage: "file",
      dataDir,
      logger: createLogger("debug", (line) => lines.push(line)),
    });
    const roles = "/apis/rbac.authorization.platform.io/v1/clusterroles";
    for (const name of ["a\u0000b", "x\n2026-01-01T00:00:00.000Z INFO  forged", "\u001b[2J"]) {
      await ts.json("POST", roles, { body: { metadata: { name }, rules: [] } });
      await ts.json("PUT", `${roles}/${encodeURIComponent(name)}`, {
        body: { metadata: { name }, rules: [] },
      });
    }
    await ts.json("POST", CM, {
      body: `{"metadata":{"name":"d"},"x":${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
    });
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
  assert(lines.length > 0, "the server logged something");
  // deno-lint-ignore no-control-regex
  const control = /[\u0000-\u001f\u007f-\u009f]/;
  for (const line of lines) {
    assert(!control.test(line), `control character in ${JSON.stringify(line)}`);
  }
});
