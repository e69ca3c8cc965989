import assert from "node:assert/strict";
import { FieldSet, pathString } from "./fieldset.ts";
import { managerFromUserAgent, validateFieldManager } from "./mod.ts";

Deno.test("FieldsV1: written with '.' first, then f:, k:, v:, i: elements, each sorted", () => {
  const set = new FieldSet();
  set.insert(["f:spec", "f:list", 'k:{"name":"b"}']);
  set.insert(["f:spec", "f:list", 'k:{"name":"b"}', "f:value"]);
  set.insert(["f:spec", "f:list", 'k:{"name":"a"}']);
  set.insert(["f:spec", "f:b"]);
  set.insert(["f:spec", "f:a"]);
  set.insert(["f:metadata", "f:finalizers", 'v:"x"']);
  const json = JSON.stringify(set.toFieldsV1());
  assert.equal(
    json,
    '{"f:metadata":{"f:finalizers":{"v:\\"x\\"":{}}},"f:spec":{"f:a":{},"f:b":{},' +
      '"f:list":{"k:{\\"name\\":\\"a\\"}":{},"k:{\\"name\\":\\"b\\"}":{".":{},"f:value":{}}}}}',
  );
  assert.ok(FieldSet.fromFieldsV1(JSON.parse(json)).equals(set));
});

Deno.test("FieldsV1: keys others wrote are read in canonical form; malformed ones are refused", () => {
  const set = FieldSet.fromFieldsV1({ "f:ports": { 'k:{"protocol":"TCP", "port":80}': {} } });
  assert.ok(set.has(["f:ports", 'k:{"port":80,"protocol":"TCP"}']));
  assert.throws(() => FieldSet.fromFieldsV1({ "x:y": {} }), /unknown path element/);
  assert.throws(() => FieldSet.fromFieldsV1({ "k:{oops": {} }), /invalid JSON/);
  assert.throws(() => FieldSet.fromFieldsV1({ "f:a": [] }), /expected an object/);
});

Deno.test("set operations work path by path", () => {
  const a = new FieldSet();
  a.insert(["f:x"]);
  a.insert(["f:y", "f:z"]);
  const b = new FieldSet();
  b.insert(["f:y", "f:z"]);
  b.insert(["f:w"]);
  assert.deepEqual([...a.difference(b).paths()], [["f:x"]]);
  assert.deepEqual([...a.intersection(b).paths()], [["f:y", "f:z"]]);
  assert.equal([...a.union(b).paths()].length, 3);
  assert.ok(new FieldSet().isEmpty());
});

Deno.test("paths print as Kubernetes prints them in conflicts", () => {
  assert.equal(
    pathString(["f:spec", "f:list", 'k:{"name":"a"}', "f:value"]),
    '.spec.list[name="a"].value',
  );
  assert.equal(pathString(["f:spec", "f:set", 'v:"a"']), '.spec.set[="a"]');
  assert.equal(
    pathString(["f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}', "f:name"]),
    '.spec.ports[port=80,protocol="TCP"].name',
  );
  assert.equal(pathString(["f:items", "i:3"]), ".items[3]");
});

Deno.test("field managers: from the User-Agent, and the parameter's limits", () => {
  assert.equal(managerFromUserAgent("kubectl/v1.32.4 (linux/amd64) kubernetes/abc"), "kubectl");
  assert.equal(managerFromUserAgent("tool\u0007name/1"), "toolname");
  assert.equal(managerFromUserAgent(""), "unknown");
  assert.equal(managerFromUserAgent("x".repeat(200)).length, 128);
  // 128 bytes of UTF-8, whole characters only: 64 of 2 bytes, 42 of 3, 32 of 4.
  assert.equal(managerFromUserAgent("é".repeat(100)), "é".repeat(64));
  assert.equal(managerFromUserAgent("€".repeat(100)), "€".repeat(42));
  assert.equal(managerFromUserAgent("🚀".repeat(100)), "🚀".repeat(32));
  // Asked again (the answer now remembered): the same.
  assert.equal(managerFromUserAgent("€".repeat(100)), "€".repeat(42));
  assert.equal(managerFromUserAgent("tool\u0007name/2"), "toolname");
  assert.deepEqual(validateFieldManager("ok-manager"), []);
  assert.equal(validateFieldManager("m".repeat(129))[0].type, "TooLong");
  assert.equal(validateFieldManager("bad\nname")[0].type, "Invalid");
});
