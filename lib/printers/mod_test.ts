// Messages and outputs as kubectl 1.32 prints them (checked with `kubectl annotate --local
// -f obj.json -o …`); tests/printers_kubectl_test.ts compares against kubectl end to end.
import assert from "node:assert/strict";
import { assertEquals } from "../../tests/assert.ts";
import {
  jsonPathValueText,
  listForPrinting,
  parseOutputFormat,
  PrintError,
  printObject,
} from "./mod.ts";

const ALLOWED =
  "go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml";

Deno.test("parseOutputFormat: formats, templates and kubectl's messages", () => {
  assertEquals(parseOutputFormat("json"), { name: "json" });
  assertEquals(parseOutputFormat("jsonpath={.a=b}"), { name: "jsonpath", argument: "{.a=b}" });
  assertEquals(parseOutputFormat("templatefile=/t"), { name: "templatefile", argument: "/t" });
  for (const spec of ["foo", "json=x", "custom-columns"]) {
    assert.throws(() => parseOutputFormat(spec), {
      message:
        `unable to match a printer suitable for the output format "${spec}", allowed formats are: ${ALLOWED}`,
    });
  }
  for (const spec of ["jsonpath", "go-template=", "template"]) {
    assert.throws(() => parseOutputFormat(spec), {
      message: "template format specified but no template given",
    });
  }
});

Deno.test("parseOutputFormat: --template alone means go-template, and fills a template format", () => {
  assertEquals(parseOutputFormat("", "{{.x}}"), { name: "go-template", argument: "{{.x}}" });
  assertEquals(parseOutputFormat("jsonpath", "{.x}"), { name: "jsonpath", argument: "{.x}" });
  assertEquals(parseOutputFormat("json", "{{.x}}"), { name: "json" });
  assert.throws(() => parseOutputFormat("go-template={{.kind}}", "{{.x}}"), {
    message:
      `unable to match a printer suitable for the output format "go-template={{.kind}}", allowed formats are: ${ALLOWED}`,
  });
});

Deno.test("printObject: name prints kind.group/name, one line per item of a list", async () => {
  const deployment = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" } };
  assertEquals(await printObject(deployment, parseOutputFormat("name")), "deployment.apps/web\n");
  const list = listForPrinting([{ metadata: { name: "a" } }, { metadata: { name: "b" } }], {
    apiVersion: "v1",
    kind: "ConfigMapList",
  });
  assertEquals(await printObject(list, parseOutputFormat("name")), "configmap/a\nconfigmap/b\n");
  assertEquals(list.metadata, { resourceVersion: "" });
});

Deno.test("printObject: json and yaml leave out managedFields unless asked; templates see them", async () => {
  const obj = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "a", managedFields: [{ manager: "m" }] },
  };
  const json = await printObject(obj, parseOutputFormat("json"));
  assert.ok(!json.includes("managedFields"), json);
  const shown = await printObject(obj, parseOutputFormat("yaml"), { showManagedFields: true });
  assert.ok(shown.includes("manager: m"), shown);
  assertEquals(
    await printObject(obj, parseOutputFormat("jsonpath={.metadata.managedFields[0].manager}")),
    "m",
  );
});

Deno.test("printObject: template failures carry kubectl's stdout and message", async () => {
  const obj = { kind: "ConfigMap", metadata: { name: "a" } };
  try {
    await printObject(obj, parseOutputFormat("go-template=x{{.nope}}"), {
      allowMissingTemplateKeys: false,
    });
    assert.fail("printed");
  } catch (e) {
    assert.ok(e instanceof PrintError);
    assertEquals(
      e.message,
      'error executing template "x{{.nope}}": template: output:1:3: executing "output" at <.nope>: map has no entry for key "nope"',
    );
    assert.ok(e.stdout.startsWith("xError executing template: template: output:1:3:"), e.stdout);
    assert.ok(
      e.stdout.endsWith(
        "object given to template engine was:\n\t\tmap[kind:ConfigMap metadata:map[name:a]]\n\n",
      ),
    );
  }
  await assert.rejects(printObject(obj, parseOutputFormat("jsonpath={.a")), {
    message: "error parsing jsonpath {.a, unclosed action\n",
  });
});

Deno.test("jsonPathValueText: a printer column's string cell", () => {
  assertEquals(jsonPathValueText({ b: 1, a: "<" }), '{"a":"\\u003c","b":1}');
  assertEquals([
    jsonPathValueText(3),
    jsonPathValueText(2.5),
    jsonPathValueText("x"),
    jsonPathValueText(null),
  ], [
    "3",
    "2.5",
    "x",
    "null",
  ]);
});
