import assert from "node:assert/strict";
import { z } from "zod";
import { fieldPath, formatIssue, formatIssueAsFieldError, similarField } from "./schema_issues.ts";

const schema = z.strictObject({
  timeout: z.string(),
  items: z.array(z.strictObject({ name: z.string() })),
  mode: z.enum(["a", "b"]).optional(),
});

function issuesOf(data: unknown) {
  const r = schema.safeParse(data);
  assert.ok(!r.success);
  return r.error.issues;
}

Deno.test("fieldPath: dots, indexes, quoted keys; kube quotes names with a hyphen", () => {
  assert.equal(fieldPath(["a", 0, "b-c", "x/y"]), 'a[0].b-c["x/y"]');
  assert.equal(fieldPath(["a", 0, "b-c"], { hyphens: false }), 'a[0]["b-c"]');
});

Deno.test("formatIssue: the plain wording, with or without articles, hints and expectations", () => {
  const data = { timeout: 5, items: [{ name: "x", nmae: 1 }], mode: "c" };
  const issues = issuesOf(data);
  const plain = issues.flatMap((i) => formatIssue(i, data));
  assert.deepEqual(plain, [
    "timeout: expected string, got 5",
    "items[0].nmae: unknown field",
    'mode: expected one of "a", "b", got "c"',
  ]);
  const worded = issues.flatMap((i) =>
    formatIssue(i, data, {
      articles: true,
      suggest: (key) => similarField(key, ["n_mae", "name"]),
      expects: (path) => path.at(-1) === "timeout" ? 'a duration such as "30s"' : undefined,
    })
  );
  assert.deepEqual(worded, [
    'timeout: expected a duration such as "30s", got 5',
    'items[0].nmae: unknown field (did you mean "n_mae"?)',
    'mode: expected one of "a", "b", got "c"',
  ]);
  assert.deepEqual(formatIssue(issuesOf({ items: [] })[0], { items: [] }), [
    "timeout: required field is missing",
  ]);
});

Deno.test("formatIssueAsFieldError: kube's field errors", () => {
  const data = { timeout: "1s", items: { a: 1 }, "x-y": 1 };
  assert.deepEqual(issuesOf(data).flatMap((i) => formatIssueAsFieldError(i, data)), [
    'items: Invalid value: "<mapping>": must be a list',
    '["x-y"]: unknown field',
  ]);
});
