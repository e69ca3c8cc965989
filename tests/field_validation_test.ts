/**
 * fieldValidation on create and update: unknown and duplicate fields are rejected (Strict, 400
 * naming every field), dropped with a Warning header (Warn, the default) or dropped silently
 * (Ignore).
 */

import { assertEquals } from "./assert.ts";
import { testServer } from "./harness.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const body = (name: string) =>
  `{"metadata":{"name":"${name}","name":"${name}","labels":{"a":"1"}},"data":{"k":"v"},"dta":{"x":"y"}}`;

Deno.test("fieldValidation: Strict rejects, Warn warns (default), Ignore is silent", async () => {
  await using ts = await testServer();
  const strict = await ts.json("POST", `${CM}?fieldValidation=Strict`, { body: body("s") });
  assertEquals([strict.status, strict.body.reason], [400, "BadRequest"]);
  assertEquals(
    strict.body.message,
    'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: ' +
      'duplicate field "metadata.name", unknown field "dta"',
  );
  assertEquals((await ts.json("GET", `${CM}/s`)).status, 404);

  for (const q of ["", "?fieldValidation=Warn"]) {
    const name = `w${q.length}`;
    const warned = await ts.json("POST", `${CM}${q}`, { body: body(name) });
    assertEquals(warned.status, 201, q);
    assertEquals(
      warned.headers.get("warning"),
      '299 - "duplicate field \\"metadata.name\\"", 299 - "unknown field \\"dta\\""',
    );
    assertEquals(warned.body.dta, undefined, "the unknown field is dropped");
  }

  const ignored = await ts.json("POST", `${CM}?fieldValidation=Ignore`, { body: body("i") });
  assertEquals([ignored.status, ignored.headers.get("warning")], [201, null]);

  const update = await ts.json("PUT", `${CM}/i?fieldValidation=Strict`, { body: body("i") });
  assertEquals(update.status, 400);
  const bad = await ts.json("POST", `${CM}?fieldValidation=Sometimes`, { body: body("b") });
  assertEquals(bad.status, 400);
});
