import { assertEquals } from "../../tests/assert.ts";
import { duplicateFields as find } from "./json_duplicates.ts";

const duplicateFields = (text: string) => find(text, JSON.parse(text));

Deno.test("duplicateFields finds repeated keys with their paths, in document order", () => {
  assertEquals(duplicateFields('{"a":1,"b":2}'), []);
  assertEquals(duplicateFields('{"metadata":{"name":"x","name":"y"},"a":1,"a":2}'), [
    "metadata.name",
    "a",
  ]);
  assertEquals(
    duplicateFields('{"spec":{"c":[{"n":1},{"n":1,"n":2}],"e":{},"p":true,"p":false}}'),
    ["spec.c[1].n", "spec.p"],
  );
  // Equal keys in different objects are fine; escapes and strings full of syntax are keys too.
  assertEquals(duplicateFields('{"x":{"k":1},"y":{"k":1},"s":"{\\"k\\":[,]}"}'), []);
  assertEquals(duplicateFields('{"\\u0061":1,"a":2}'), ["a"]);
  assertEquals(duplicateFields('[{}, "v", {"a":1,"a":1}]'), ["[2].a"]);
});
