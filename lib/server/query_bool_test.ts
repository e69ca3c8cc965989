/**
 * Boolean query parameters as kube reads them: the metav1 options' rule ({@link queryBool}) and
 * `pretty`'s own (`strconv.ParseBool`, {@link isPretty}).
 */

import { assertEquals } from "../../tests/assert.ts";
import type { RequestContext } from "./context.ts";
import { queryBool } from "./request_info.ts";
import { isPretty } from "./respond.ts";

// [query, queryBool(…, "b"), isPretty with `pretty` in place of `b`]
const CASES: [string, boolean | undefined, boolean][] = [
  ["", undefined, false],
  ["?other=1", undefined, false],
  ["?b=true", true, true],
  ["?b=1", true, true],
  ["?b=True", true, true],
  ["?b=TRUE", true, true],
  ["?b=t", true, true],
  ["?b=false", false, false],
  ["?b=0", false, false],
  ["?b=False", false, false],
  ["?b=FALSE", false, false],
  ["?b=fAlSe", false, false],
  ["?b=", true, false],
  ["?b", true, false],
  ["?b=yes", true, false],
  ["?b=no", true, false],
  ["?b=f", true, false],
  ["?b=%20false", true, false],
  ["?b=false&b=true", false, false],
  ["?b=true&b=false", true, true],
];

Deno.test("queryBool: present is true unless 0 or false in any case; absent is undefined", () => {
  for (const [query, want] of CASES) {
    assertEquals(queryBool(new URL(`https://h/p${query}`), "b"), want, query);
  }
});

Deno.test("isPretty: Go's ParseBool on the value; anything else is false", () => {
  for (const [query, , want] of CASES) {
    const url = new URL(`https://h/p${query.replaceAll("b", "pretty")}`);
    assertEquals(isPretty({ url } as RequestContext), want, query);
  }
});
