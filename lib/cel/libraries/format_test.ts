import * as assert from "node:assert/strict";
import { compile } from "../mod.ts";

const run = (expression: string, expect: "bool" | "any" = "bool") =>
  compile("crdRule", expression, { expect }).evaluate({ self: null, oldSelf: null });

Deno.test("format: valid values give none, invalid ones Kubernetes' messages", () => {
  const valid = [
    "format.dns1123Label().validate('my-label-name')",
    "format.dns1123Subdomain().validate('apiextensions.k8s.io')",
    "format.dns1035Label().validate('my-label-name')",
    "format.qualifiedName().validate('apiextensions.k8s.io/v1beta1')",
    "format.dns1123LabelPrefix().validate('my-label-prefix-')",
    "format.labelValue().validate('')",
    "format.uri().validate('http://example.com')",
    "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000')",
    "format.byte().validate('aGVsbG8=')",
    "format.date().validate('2021-01-01')",
    "format.datetime().validate('2021-01-01T00:00:00Z')",
    "format.named('dns1123Label').value().validate('ok')",
  ];
  for (const v of valid) assert.equal(run(`!${v}.hasValue()`), true, v);
  assert.equal(run("!format.named('nope').hasValue()"), true);
  assert.deepEqual(run("format.dns1123Label().validate('Bad_Name').value()", "any"), [
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', " +
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', " +
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ]);
  assert.deepEqual(run("format.date().validate('2021-02-30').value()", "any"), ["invalid date"]);
  assert.deepEqual(run("format.uuid().validate('x').value()", "any"), [
    "does not match the UUID format",
  ]);
  assert.deepEqual(run("format.uri().validate('not a uri').value()", "any"), [
    'parse "not a uri": invalid URI for request',
  ]);
});
