import { assertEquals } from "../../tests/assert.ts";
import { jsonTooDeep, MAX_NESTING_DEPTH, valueTooDeep } from "./nesting.ts";

const nested = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;

Deno.test("jsonTooDeep counts objects and arrays outside strings", () => {
  assertEquals(jsonTooDeep(nested(MAX_NESTING_DEPTH)), false);
  assertEquals(jsonTooDeep(nested(MAX_NESTING_DEPTH + 1)), true);
  assertEquals(jsonTooDeep(`{"a":${'{"b":'.repeat(4)}1${"}".repeat(4)}}`, 5), false);
  assertEquals(jsonTooDeep(`{"a":${'{"b":'.repeat(5)}1${"}".repeat(5)}}`, 5), true);
  // Brackets in strings, escaped quotes included, are text.
  assertEquals(jsonTooDeep(`{"s":"[[[[[\\"[[[[[", "t": "{{{{{{"}`, 2), false);
  assertEquals(jsonTooDeep(`[[], [], [[]]]`, 2), true);
});

Deno.test("valueTooDeep measures a decoded value without recursion", () => {
  assertEquals(valueTooDeep(JSON.parse(nested(MAX_NESTING_DEPTH))), false);
  assertEquals(valueTooDeep(JSON.parse(nested(MAX_NESTING_DEPTH + 1))), true);
  assertEquals(valueTooDeep(JSON.parse(nested(100_000))), true);
  assertEquals(valueTooDeep({ a: [{ b: "x" }] }, 3), false);
  assertEquals(valueTooDeep({ a: [{ b: {} }] }, 3), true);
  assertEquals(valueTooDeep("scalar", 0), false);
});
