// deno-lint-ignore-file no-explicit-any
/**
 * Server-side apply over HTTPS: every behaviour of `testdata/ssa-behaviours/ssa-behaviours.md`
 * on the catalogue's Widget CRD (`testdata/crd/widgets.yaml`), as a user would see it: the
 * status code, the stored object and `metadata.managedFields`, and the conflict Status.
 *
 * Not here: S4 and S36 need a CRD serving two versions: tests/crd_versions_test.ts has them.
 */

import { parse } from "yaml";
import { assertEquals, assertMatch } from "./assert.ts";
import { type TestServer, testServer } from "./harness.ts";

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const CRD_NAME = "widgets.ssa.example.com";
const WIDGETS = "/apis/ssa.example.com/v1/namespaces/default/widgets";
const crdText = await Deno.readTextFile(new URL("../testdata/crd/widgets.yaml", import.meta.url));

async function widgetServer(): Promise<TestServer> {
  const t = await testServer();
  const res = await t.json("POST", CRDS, { body: parse(crdText) });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  await until(async () => (await t.json("GET", WIDGETS)).status === 200);
  return t;
}

async function until(done: () => Promise<boolean>, what = "condition") {
  for (let i = 0; i < 200; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Reply {
  status: number;
  body: any;
}

/** The notation of the catalogue (§0.2) for one object. */
class Widget {
  constructor(readonly t: TestServer, readonly name: string) {}

  /** APPLY(m, S); `spec` undefined applies "nothing". */
  apply(
    manager: string,
    spec?: unknown,
    opts: { force?: boolean; status?: unknown; subresource?: string } = {},
  ): Promise<Reply> {
    const body: any = {
      apiVersion: "ssa.example.com/v1",
      kind: "Widget",
      metadata: { name: this.name },
    };
    if (spec !== undefined) body.spec = spec;
    if (opts.status !== undefined) body.status = opts.status;
    const sub = opts.subresource ? `/${opts.subresource}` : "";
    const q = `fieldManager=${manager}${opts.force ? "&force=true" : ""}`;
    return this.t.json("PATCH", `${WIDGETS}/${this.name}${sub}?${q}`, {
      headers: { "Content-Type": "application/apply-patch+yaml" },
      body: JSON.stringify(body),
    });
  }

  force(manager: string, spec?: unknown): Promise<Reply> {
    return this.apply(manager, spec, { force: true });
  }

  /** UPDATE(m, S): GET, replace spec, PUT back; POST when missing. */
  async update(manager: string, spec: unknown): Promise<Reply> {
    const live = await this.t.json("GET", `${WIDGETS}/${this.name}`);
    if (live.status === 404) {
      return this.t.json("POST", `${WIDGETS}?fieldManager=${manager}`, {
        body: {
          apiVersion: "ssa.example.com/v1",
          kind: "Widget",
          metadata: { name: this.name },
          spec,
        },
      });
    }
    const obj = live.body;
    obj.spec = spec;
    const res = await this.t.json("PUT", `${WIDGETS}/${this.name}?fieldManager=${manager}`, {
      body: obj,
    });
    assertEquals(res.status, 200, JSON.stringify(res.body));
    return res;
  }

  async get(): Promise<any> {
    const res = await this.t.json("GET", `${WIDGETS}/${this.name}`);
    assertEquals(res.status, 200);
    return res.body;
  }

  /** `manager (Operation[, subresource])` → fieldsV1, as the catalogue writes entries. */
  async managers(): Promise<Record<string, unknown>> {
    return managersOf(await this.get());
  }
}

function managersOf(obj: any): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of obj.metadata.managedFields ?? []) {
    const sub = e.subresource ? `, ${e.subresource}` : "";
    out[`${e.manager} (${e.operation}${sub})`] = e.fieldsV1;
  }
  return out;
}

function ok(res: Reply, status = 200) {
  assertEquals(res.status, status, JSON.stringify(res.body));
}

/** `request` is a 409 with kube's message and one cause per path, and changes nothing. */
async function conflict(
  w: Widget,
  request: () => Promise<Reply>,
  message: string,
  fields: string[],
): Promise<Reply> {
  const before = await w.get();
  const res = await request();
  assertEquals(res.status, 409, JSON.stringify(res.body));
  assertEquals(res.body.reason, "Conflict");
  assertEquals(res.body.message, message);
  assertEquals(res.body.details.causes.map((c: any) => c.field), fields);
  for (const c of res.body.details.causes) assertEquals(c.reason, "FieldManagerConflict");
  assertEquals(await w.get(), before, "a conflict writes nothing");
  return res;
}

const k = (fields: Record<string, unknown>) => `k:${JSON.stringify(fields)}`;
const v = (value: unknown) => `v:${JSON.stringify(value)}`;

Deno.test("ssa: one applier and updaters on scalar fields (S1-S11)", async (t) => {
  await using ts = await widgetServer();

  await t.step("S1 apply owns what it sends; a superset extends ownership", async () => {
    const w = new Widget(ts, "s1");
    ok(await w.apply("default", { numeric: 1, string: "string" }), 201);
    const res = await w.apply("default", { numeric: 2, string: "string", bool: false });
    ok(res);
    assertEquals(res.body.spec, { numeric: 2, string: "string", bool: false });
    assertEquals(await w.managers(), {
      "default (Apply)": { "f:spec": { "f:bool": {}, "f:numeric": {}, "f:string": {} } },
    });
    const entry = res.body.metadata.managedFields[0];
    assertEquals(
      [entry.apiVersion, entry.fieldsType, typeof entry.time],
      ["ssa.example.com/v1", "FieldsV1", "string"],
    );
  });

  await t.step("S2 a field dropped from the next apply is deleted", async () => {
    const w = new Widget(ts, "s2");
    ok(await w.apply("default", { numeric: 1, string: "string", bool: false }), 201);
    const res = await w.apply("default", { string: "new string" });
    assertEquals(res.body.spec, { string: "new string" });
    assertEquals(await w.managers(), { "default (Apply)": { "f:spec": { "f:string": {} } } });
  });

  await t.step("S3 an empty configuration removes everything and the entry", async () => {
    const w = new Widget(ts, "s3");
    ok(await w.apply("default", { string: "string" }), 201);
    const res = await w.apply("default");
    ok(res);
    assertEquals(res.body.spec, undefined);
    assertEquals(res.body.metadata.managedFields, undefined);
  });

  await t.step("S5 an updater adding a field owns only it", async () => {
    const w = new Widget(ts, "s5");
    ok(await w.apply("default", { numeric: 1, string: "string" }), 201);
    await w.update("controller", { numeric: 1, string: "string", bool: true });
    const res = await w.apply("default", { numeric: 2, string: "string" });
    ok(res);
    assertEquals(res.body.spec, { numeric: 2, string: "string", bool: true });
    assertEquals(await w.managers(), {
      "default (Apply)": { "f:spec": { "f:numeric": {}, "f:string": {} } },
      "controller (Update)": { "f:spec": { "f:bool": {} } },
    });
  });

  await t.step(
    "S6 S7 an updater takes a changed field; apply then conflicts; force wins",
    async () => {
      const w = new Widget(ts, "s6");
      ok(await w.apply("default", { numeric: 1, string: "string" }), 201);
      await w.update("controller", { numeric: 1, string: "controller string", bool: true });
      assertEquals(await w.managers(), {
        "default (Apply)": { "f:spec": { "f:numeric": {} } },
        "controller (Update)": { "f:spec": { "f:bool": {}, "f:string": {} } },
      });
      const res = await conflict(
        w,
        () => w.apply("default", { numeric: 2, string: "user string" }),
        'Apply failed with 1 conflict: conflict with "controller" using ssa.example.com/v1: .spec.string',
        [".spec.string"],
      );
      assertEquals(
        res.body.details.causes[0].message,
        'conflict with "controller" using ssa.example.com/v1',
      );
      const forced = await w.force("default", { numeric: 2, string: "user string" });
      ok(forced);
      assertEquals(forced.body.spec, { numeric: 2, string: "user string", bool: true });
      assertEquals(await w.managers(), {
        "default (Apply)": { "f:spec": { "f:numeric": {}, "f:string": {} } },
        "controller (Update)": { "f:spec": { "f:bool": {} } },
      });
    },
  );

  await t.step("S8 a field whose ownership was lost is not deleted by omission", async () => {
    const w = new Widget(ts, "s8");
    ok(await w.apply("default", { numeric: 2 }), 201);
    await w.update("controller", { numeric: 1 });
    assertEquals(await w.managers(), { "controller (Update)": { "f:spec": { "f:numeric": {} } } });
    const res = await w.apply("default");
    assertEquals(res.body.spec, { numeric: 1 });
    assertEquals(await w.managers(), { "controller (Update)": { "f:spec": { "f:numeric": {} } } });
  });

  await t.step("S9 an updater claims a field an applier set", async () => {
    const w = new Widget(ts, "s9");
    ok(await w.apply("applier", { struct: { name: "a", value: 1 } }), 201);
    const res = await w.update("updater", { struct: { name: "a", value: 2 } });
    assertEquals(res.body.spec, { struct: { name: "a", value: 2 } });
    assertEquals(await w.managers(), {
      "applier (Apply)": { "f:spec": { "f:struct": { "f:name": {} } } },
      "updater (Update)": { "f:spec": { "f:struct": { "f:value": {} } } },
    });
  });

  await t.step("S10 applying an updater's value shares it; dropping it keeps it", async () => {
    const w = new Widget(ts, "s10");
    ok(await w.update("updater", { struct: { name: "a", value: 1 } }), 201);
    ok(await w.apply("applier", { struct: { name: "a", value: 1 } }));
    const res = await w.apply("applier", { struct: { name: "a" } });
    assertEquals(res.body.spec, { struct: { name: "a", value: 1 } });
    assertEquals(await w.managers(), {
      "updater (Update)": {
        "f:spec": { ".": {}, "f:struct": { ".": {}, "f:name": {}, "f:value": {} } },
      },
      "applier (Apply)": { "f:spec": { "f:struct": { "f:name": {} } } },
    });
  });

  await t.step("S11 a field two appliers share survives when one drops it", async () => {
    const w = new Widget(ts, "s11");
    ok(await w.apply("apply-one", { struct: { name: "a", value: 1 } }), 201);
    ok(await w.apply("apply-two", { struct: { value: 1 } }));
    const res = await w.apply("apply-one", { struct: { name: "a" } });
    assertEquals(res.body.spec, { struct: { name: "a", value: 1 } });
    assertEquals(await w.managers(), {
      "apply-one (Apply)": { "f:spec": { "f:struct": { "f:name": {} } } },
      "apply-two (Apply)": { "f:spec": { "f:struct": { "f:value": {} } } },
    });
    // The sole owner dropping a field deletes it.
    const alone = await w.apply("apply-one", {});
    assertEquals(alone.body.spec, { struct: { value: 1 } });
  });
});

Deno.test("ssa: associative lists and sets (S12-S23)", async (t) => {
  await using ts = await widgetServer();
  const itemA = { [k({ name: "a" })]: { ".": {}, "f:name": {}, "f:value": {} } };

  await t.step("S12 S13 identical items are co-owned; different values conflict", async () => {
    const w = new Widget(ts, "s12");
    ok(await w.apply("apply-one", { list: [{ name: "a", value: 0 }] }), 201);
    ok(await w.apply("apply-two", { list: [{ name: "a", value: 0 }] }));
    assertEquals(await w.managers(), {
      "apply-one (Apply)": { "f:spec": { "f:list": itemA } },
      "apply-two (Apply)": { "f:spec": { "f:list": itemA } },
    });
    const w2 = new Widget(ts, "s13");
    ok(await w2.apply("apply-one", { list: [{ name: "a", value: 0 }] }), 201);
    await conflict(
      w2,
      () => w2.apply("apply-two", { list: [{ name: "a", value: 1 }] }),
      'Apply failed with 1 conflict: conflict with "apply-one": .spec.list[name="a"].value',
      ['.spec.list[name="a"].value'],
    );
    assertEquals((await w2.get()).spec.list, [{ name: "a", value: 0 }]);
    assertEquals(Object.keys(await w2.managers()), ["apply-one (Apply)"]);
  });

  await t.step("S14 an item whose key changes replaces the old item", async () => {
    const w = new Widget(ts, "s14");
    ok(await w.apply("default", { list: [{ name: "a", value: 1 }] }), 201);
    const res = await w.apply("default", { list: [{ name: "b", value: 2 }] });
    assertEquals(res.body.spec.list, [{ name: "b", value: 2 }]);
    assertEquals(await w.managers(), {
      "default (Apply)": {
        "f:spec": { "f:list": { [k({ name: "b" })]: { ".": {}, "f:name": {}, "f:value": {} } } },
      },
    });
  });

  await t.step("S15 each applier removes only its own items", async () => {
    const w = new Widget(ts, "s15");
    ok(await w.apply("apply-one", { list: [{ name: "a" }, { name: "b" }, { name: "c" }] }), 201);
    ok(await w.apply("apply-two", { list: [{ name: "c" }, { name: "d" }] }));
    const res = await w.apply("apply-one", { list: [{ name: "a" }] });
    assertEquals(res.body.spec.list, [{ name: "a" }, { name: "c" }, { name: "d" }]);
    const item = { ".": {}, "f:name": {} };
    assertEquals(await w.managers(), {
      "apply-one (Apply)": { "f:spec": { "f:list": { [k({ name: "a" })]: item } } },
      "apply-two (Apply)": {
        "f:spec": { "f:list": { [k({ name: "c" })]: item, [k({ name: "d" })]: item } },
      },
    });
  });

  await t.step("S16 a co-owned item survives without the remover's private children", async () => {
    const w = new Widget(ts, "s16");
    ok(
      await w.apply("apply-one", { listOfLists: [{ name: "a" }, { name: "b", value: ["c"] }] }),
      201,
    );
    const two = await w.apply("apply-two", { listOfLists: [{ name: "b", value: ["d"] }] });
    assertEquals(two.body.spec.listOfLists, [{ name: "a" }, { name: "b", value: ["c", "d"] }]);
    const res = await w.apply("apply-one", { listOfLists: [{ name: "a" }] });
    assertEquals(res.body.spec.listOfLists, [{ name: "a" }, { name: "b", value: ["d"] }]);
  });

  await t.step("S17 children an updater added survive with their item", async () => {
    const w = new Widget(ts, "s17");
    ok(
      await w.apply("apply-one", { listOfLists: [{ name: "a" }, { name: "b", value: ["c"] }] }),
      201,
    );
    ok(await w.apply("apply-two", { listOfLists: [{ name: "b", value: ["d"] }] }));
    await w.update("controller", {
      listOfLists: [{ name: "a" }, { name: "b", value: ["c", "d", "e"] }],
    });
    const res = await w.apply("apply-one", { listOfLists: [{ name: "a" }] });
    assertEquals(res.body.spec.listOfLists, [{ name: "a" }, { name: "b", value: ["d", "e"] }]);
    assertEquals((await w.managers())["controller (Update)"], {
      "f:spec": { "f:listOfLists": { [k({ name: "b" })]: { "f:value": { [v("e")]: {} } } } },
    });
  });

  await t.step("S18 an item the remover owned alone goes with everything beneath it", async () => {
    const w = new Widget(ts, "s18");
    ok(
      await w.apply("apply-one", { listOfLists: [{ name: "a" }, { name: "b", value: ["c"] }] }),
      201,
    );
    ok(await w.apply("apply-two", { listOfLists: [{ name: "a", value: ["b"] }] }));
    await w.update("controller", {
      listOfLists: [{ name: "a", value: ["b"] }, { name: "b", value: ["c", "d"] }],
    });
    const res = await w.apply("apply-one", { listOfLists: [{ name: "a" }] });
    assertEquals(res.body.spec.listOfLists, [{ name: "a", value: ["b"] }]);
    assertEquals(await w.managers(), {
      "apply-one (Apply)": {
        "f:spec": { "f:listOfLists": { [k({ name: "a" })]: { ".": {}, "f:name": {} } } },
      },
      "apply-two (Apply)": {
        "f:spec": {
          "f:listOfLists": {
            [k({ name: "a" })]: { ".": {}, "f:name": {}, "f:value": { [v("b")]: {} } },
          },
        },
      },
    });
  });

  await t.step("S19 changing the key and the nested values in one apply", async () => {
    const w = new Widget(ts, "s19");
    ok(await w.apply("default", { listOfLists: [{ name: "a", value: ["b", "c"] }] }), 201);
    const res = await w.apply("default", { listOfLists: [{ name: "b", value: ["a", "c"] }] });
    assertEquals(res.body.spec.listOfLists, [{ name: "b", value: ["a", "c"] }]);
    assertEquals(await w.managers(), {
      "default (Apply)": {
        "f:spec": {
          "f:listOfLists": {
            [k({ name: "b" })]: {
              ".": {},
              "f:name": {},
              "f:value": { [v("a")]: {}, [v("c")]: {} },
            },
          },
        },
      },
    });
    const only = await w.apply("default", { listOfLists: [{ name: "b", value: ["a"] }] });
    assertEquals(only.body.spec.listOfLists, [{ name: "b", value: ["a"] }]);
  });

  await t.step("S20 S21 set members of several managers merge", async () => {
    const w = new Widget(ts, "s20");
    ok(await w.apply("default", { set: ["a", "c"] }), 201);
    await w.update("controller", { set: ["a", "b", "c", "d"] });
    const res = await w.apply("default", { set: ["a", "aprime", "c", "cprime"] });
    assertEquals(res.body.spec.set, ["a", "b", "aprime", "c", "d", "cprime"]);
    assertEquals(await w.managers(), {
      "default (Apply)": {
        "f:spec": { "f:set": { [v("a")]: {}, [v("aprime")]: {}, [v("c")]: {}, [v("cprime")]: {} } },
      },
      "controller (Update)": { "f:spec": { "f:set": { [v("b")]: {}, [v("d")]: {} } } },
    });

    const w2 = new Widget(ts, "s21");
    ok(await w2.apply("default", { set: ["a", "c"] }), 201);
    await w2.update("controller", { set: ["a", "b", "c", "d"] });
    const shared = await w2.apply("default", { set: ["a", "b", "c"] });
    ok(shared);
    assertEquals(shared.body.spec.set, ["a", "b", "c", "d"]);
    assertEquals(await w2.managers(), {
      "default (Apply)": { "f:spec": { "f:set": { [v("a")]: {}, [v("b")]: {}, [v("c")]: {} } } },
      "controller (Update)": { "f:spec": { "f:set": { [v("b")]: {}, [v("d")]: {} } } },
    });
  });

  await t.step("S22 the applier's order wins; a reorder owns nothing", async () => {
    const w = new Widget(ts, "s22");
    ok(await w.apply("default", { set: ["a", "b", "c", "d"] }), 201);
    const again = await w.apply("default", { set: ["a", "d", "c", "b"] });
    assertEquals(again.body.spec.set, ["a", "d", "c", "b"]);
    const w2 = new Widget(ts, "s22b");
    ok(await w2.apply("default", { set: ["a", "b", "c", "d"] }), 201);
    await w2.update("controller", { set: ["a", "d", "c", "b"] });
    assertEquals(Object.keys(await w2.managers()), ["default (Apply)"]);
    const res = await w2.apply("default", { set: ["a", "b", "c", "d"] });
    assertEquals(res.body.spec.set, ["a", "b", "c", "d"]);
  });

  await t.step("S23 members their sole applier drops are removed", async () => {
    const w = new Widget(ts, "s23");
    ok(await w.apply("default", { set: ["a", "b", "c", "d"] }), 201);
    const res = await w.apply("default", { set: ["a", "c"] });
    assertEquals(res.body.spec.set, ["a", "c"]);
    // A member another applier also applied is never removed by the first one's omission.
    ok(await w.apply("other", { set: ["c"] }));
    assertEquals((await w.apply("default", { set: ["a"] })).body.spec.set, ["a", "c"]);
  });
});

Deno.test("ssa: maps, structs, atomic values and schemaless subtrees (S24-S29)", async (t) => {
  await using ts = await widgetServer();

  await t.step("S24 granular maps own each key; dropped keys are removed", async () => {
    const w = new Widget(ts, "s24");
    ok(await w.apply("default", { mapOfMaps: { a: { b: "x", c: "y" } } }), 201);
    const res = await w.apply("default", { mapOfMaps: { a: { a: "x", c: "z" } } });
    assertEquals(res.body.spec.mapOfMaps, { a: { a: "x", c: "z" } });
    assertEquals(await w.managers(), {
      "default (Apply)": {
        "f:spec": { "f:mapOfMaps": { "f:a": { ".": {}, "f:a": {}, "f:c": {} } } },
      },
    });
    const renamed = await w.apply("default", { mapOfMaps: { b: { a: "x", c: "z" } } });
    assertEquals(renamed.body.spec.mapOfMaps, { b: { a: "x", c: "z" } });
  });

  await t.step("S25 emptying a struct removes only the applier's fields", async () => {
    for (const [name, last] of [["s25a", undefined], ["s25b", { struct: {} }]] as const) {
      const w = new Widget(ts, name);
      ok(await w.apply("default", { struct: { name: "a" } }), 201);
      await w.update("controller", { struct: { name: "a", value: 1 } });
      const res = await w.apply("default", last);
      assertEquals(res.body.spec, { struct: { value: 1 } }, name);
      if (last) {
        assertEquals((await w.managers())["default (Apply)"], { "f:spec": { "f:struct": {} } });
      }
    }
    const w = new Widget(ts, "s25c");
    ok(await w.apply("default", { struct: { name: "a" } }), 201);
    await w.update("controller", { struct: { name: "b", value: 1 } });
    const res = await w.apply("default", { struct: {} });
    assertEquals(res.body.spec, { struct: { name: "b", value: 1 } });
  });

  await t.step("S26 an atomic struct is owned whole; force replaces it whole", async () => {
    const w = new Widget(ts, "s26");
    ok(await w.apply("apply-one", { atomicStruct: { field1: "a" } }), 201);
    await conflict(
      w,
      () => w.apply("apply-two", { atomicStruct: { field2: "b" } }),
      'Apply failed with 1 conflict: conflict with "apply-one": .spec.atomicStruct',
      [".spec.atomicStruct"],
    );
    const forced = await w.force("apply-two", { atomicStruct: { field2: "b" } });
    assertEquals(forced.body.spec.atomicStruct, { field2: "b" });
    assertEquals(await w.managers(), {
      "apply-two (Apply)": { "f:spec": { "f:atomicStruct": {} } },
    });
    const own = await w.apply("apply-two", { atomicStruct: { field1: "b", field2: "2" } });
    ok(own);
    assertEquals(own.body.spec.atomicStruct, { field1: "b", field2: "2" });
  });

  await t.step("S27 an atomic list behaves the same; a granular set merges", async () => {
    const w = new Widget(ts, "s27");
    ok(await w.apply("apply_one", { atomicList: [{ name: "a", value: 1 }] }), 201);
    await conflict(
      w,
      () => w.apply("apply_two", { atomicList: [{ name: "b", value: 2 }] }),
      'Apply failed with 1 conflict: conflict with "apply_one": .spec.atomicList',
      [".spec.atomicList"],
    );
    assertEquals((await w.get()).spec.atomicList, [{ name: "a", value: 1 }]);
    assertEquals(await w.managers(), { "apply_one (Apply)": { "f:spec": { "f:atomicList": {} } } });
    ok(await w.apply("apply_one", { set: ["x"] }));
    const union = await w.apply("apply_two", { set: ["y"] });
    assertEquals(union.body.spec.set, ["x", "y"]);
  });

  await t.step("S28 schemaless subtrees: maps granular, lists atomic", async () => {
    const w = new Widget(ts, "s28");
    ok(await w.apply("default", { free: { list: ["a", "c"] } }), 201);
    const res = await w.apply("default", { free: { list: ["a", "d", "c", "b"] } });
    assertEquals(res.body.spec.free.list, ["a", "d", "c", "b"]);
    assertEquals(await w.managers(), {
      "default (Apply)": { "f:spec": { "f:free": { "f:list": {} } } },
    });
    await w.update("controller", { free: { list: ["a", "b", "c", "d"] } });
    await conflict(
      w,
      () => w.apply("default", { free: { list: ["a", "b", "c"] } }),
      'Apply failed with 1 conflict: conflict with "controller" using ssa.example.com/v1: .spec.free.list',
      [".spec.free.list"],
    );
    const forced = await w.force("default", { free: { list: ["a", "b", "c"] } });
    assertEquals(forced.body.spec.free.list, ["a", "b", "c"]);
    assertEquals(Object.keys(await w.managers()), ["default (Apply)"]);

    const w2 = new Widget(ts, "s28b");
    ok(await w2.apply("default", { free: { num: 5, unknown: "value" } }), 201);
    ok(await w2.apply("default", { free: { num: 6, unknown: "new" } }));
    assertEquals(await w2.managers(), {
      "default (Apply)": { "f:spec": { "f:free": { "f:num": {}, "f:unknown": {} } } },
    });
  });

  await t.step("S29 several conflicts are reported together", async () => {
    const w = new Widget(ts, "s29");
    ok(
      await w.apply("default", {
        free: { a: 1, b: { c: { d: 2, e: [1, 2, 3], f: [{ name: "n", value: 1 }] } } },
      }),
      201,
    );
    await w.update("controller", {
      free: { a: 1, b: { c: { d: 3, e: [1, 2, 3, 4], f: [{ name: "n", value: 2 }] } }, g: 5 },
    });
    const config = {
      free: { a: 2, b: { c: { d: 2, e: [3, 2, 1], f: [{ name: "n", value: 1 }] } } },
    };
    await conflict(
      w,
      () => w.apply("default", config),
      'Apply failed with 3 conflicts: conflicts with "controller" using ssa.example.com/v1:\n' +
        "- .spec.free.b.c.d\n- .spec.free.b.c.e\n- .spec.free.b.c.f",
      [".spec.free.b.c.d", ".spec.free.b.c.e", ".spec.free.b.c.f"],
    );
    const forced = await w.force("default", config);
    assertEquals(forced.body.spec.free, {
      a: 2,
      b: { c: { d: 2, e: [3, 2, 1], f: [{ name: "n", value: 1 }] } },
      g: 5,
    });
  });
});

Deno.test("ssa: defaulted keys, schema changes, reset fields and odd inputs (S30-S35)", async (t) => {
  await using ts = await widgetServer();

  await t.step("S30 an omitted key field matches the item carrying its default", async () => {
    const w = new Widget(ts, "s30");
    ok(await w.apply("default", { ports: [{ port: 80 }] }), 201);
    assertEquals(await w.managers(), {
      "default (Apply)": {
        "f:spec": { "f:ports": { [k({ port: 80, protocol: "TCP" })]: { ".": {}, "f:port": {} } } },
      },
    });
    const two = await w.apply("default", { ports: [{ port: 80 }, { port: 80, protocol: "UDP" }] });
    ok(two);
    assertEquals(two.body.spec.ports.length, 2);

    const w2 = new Widget(ts, "s30b");
    ok(await w2.apply("apply-one", { ports: [{ port: 80, protocol: "TCP", name: "foo" }] }), 201);
    await conflict(
      w2,
      () => w2.apply("apply-two", { ports: [{ port: 80, name: "bar" }] }),
      'Apply failed with 1 conflict: conflict with "apply-one": .spec.ports[port=80,protocol="TCP"].name',
      ['.spec.ports[port=80,protocol="TCP"].name'],
    );
  });

  await t.step("S31 items that collide once defaults are filled in are refused", async () => {
    const w = new Widget(ts, "s31");
    for (
      const ports of [[{ port: 80 }, { port: 80 }], [{ port: 80 }, { port: 80, protocol: "TCP" }]]
    ) {
      const res = await w.apply("default", { ports });
      assertEquals(res.status, 400, JSON.stringify(res.body));
      assertMatch(
        res.body.message,
        /\.spec\.ports: duplicate entries for key \[port=80,protocol="TCP"\]/,
      );
    }
    const set = await w.apply("default", { set: ["a", "a"] });
    assertEquals(set.status, 400);
    assertEquals((await ts.json("GET", `${WIDGETS}/s31`)).status, 404, "nothing was created");
  });

  await t.step("S32 S33 schema changes: granular to atomic and back", async () => {
    const w = new Widget(ts, "s32");
    ok(await w.apply("one", { struct: { value: 1 } }), 201);
    const w2 = new Widget(ts, "s33");
    ok(await w2.apply("one", { atomicStruct: { field1: "a", field2: "a" } }), 201);
    const clash = await w2.apply("two", { atomicStruct: { field2: "b" } });
    assertEquals(clash.status, 409);

    await changeSchema(ts, (spec) => {
      spec.struct["x-kubernetes-map-type"] = "atomic";
      delete spec.atomicStruct["x-kubernetes-map-type"];
    });

    await conflict(
      w,
      () => w.apply("two", { struct: { name: "string" } }),
      'Apply failed with 1 conflict: conflict with "one": .spec.struct',
      [
        ".spec.struct",
      ],
    );
    const forced = await w.force("two", { struct: { name: "string" } });
    assertEquals(forced.body.spec.struct, { name: "string" });
    assertEquals((await w.managers())["two (Apply)"], { "f:spec": { "f:struct": {} } });

    const granular = await w2.apply("two", { atomicStruct: { field2: "b" } });
    ok(granular);
    assertEquals(granular.body.spec.atomicStruct, { field1: "a", field2: "b" });
    assertEquals(await w2.managers(), {
      "one (Apply)": { "f:spec": { "f:atomicStruct": {} } },
      "two (Apply)": { "f:spec": { "f:atomicStruct": { "f:field2": {} } } },
    });
  });

  await t.step("S34 status is neither changed nor owned through the main resource", async () => {
    const w = new Widget(ts, "s34");
    const res = await w.apply("default", { numeric: 1 }, { status: { phase: "x" } });
    ok(res, 201);
    assertEquals(res.body.status, undefined);
    assertEquals(await w.managers(), { "default (Apply)": { "f:spec": { "f:numeric": {} } } });
    const st = await w.apply("st", undefined, {
      subresource: "status",
      status: { phase: "Ready" },
    });
    ok(st);
    assertEquals(st.body.status, { phase: "Ready" });
    const entry = st.body.metadata.managedFields.find((e: any) => e.manager === "st");
    assertEquals([entry.subresource, entry.fieldsV1], ["status", {
      "f:status": { "f:phase": {} },
    }]);
    // The same manager on the main resource has its own entry.
    ok(await w.apply("st", { string: "s" }));
    assertEquals(Object.keys(await w.managers()).sort(), [
      "default (Apply)",
      "st (Apply)",
      "st (Apply, status)",
    ]);
    const other = await w.apply("other", { numeric: 1 }, { status: { phase: "Other" } });
    ok(other);
    assertEquals(other.body.status, { phase: "Ready" });
  });
});

Deno.test("ssa: duplicates in a live set (S35), on a built-in ConfigMap's finalizers", async () => {
  await using ts = await testServer();
  const CM = "/api/v1/namespaces/default/configmaps";
  const apply = (manager: string, finalizers: string[], force = false) =>
    ts.json("PATCH", `${CM}/dups?fieldManager=${manager}${force ? "&force=true" : ""}`, {
      headers: { "Content-Type": "application/apply-patch+yaml" },
      body: JSON.stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "dups", finalizers },
      }),
    });
  const created = await ts.json("POST", `${CM}?fieldManager=updater`, {
    body: { metadata: { name: "dups", finalizers: ["x/1", "x/1", "x/3", "x/4"] } },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  assertEquals(created.body.metadata.managedFields[0].fieldsV1, {
    "f:metadata": { "f:finalizers": { ".": {}, [v("x/1")]: {}, [v("x/3")]: {}, [v("x/4")]: {} } },
  });
  const added = await apply("applier", ["x/5"]);
  assertEquals(added.body.metadata.finalizers, ["x/1", "x/1", "x/3", "x/4", "x/5"]);
  const clash = await apply("applier", ["x/1"]);
  assertEquals(clash.status, 409);
  assertEquals(
    clash.body.message,
    'Apply failed with 1 conflict: conflict with "updater" using v1: .metadata.finalizers[="x/1"]',
  );
  const forced = await apply("applier", ["x/1"], true);
  assertEquals(forced.body.metadata.finalizers, ["x/1", "x/3", "x/4"]);
  // Let the test server stop: drop the finalizers.
  const cleared = await ts.json("PATCH", `${CM}/dups`, {
    headers: { "Content-Type": "application/merge-patch+json" },
    body: { metadata: { finalizers: null } },
  });
  assertEquals(cleared.status, 200);
});

/** Updates the Widget CRD's spec schema with `change` and waits until it is served. */
async function changeSchema(ts: TestServer, change: (spec: any) => void) {
  const crd = (await ts.json("GET", `${CRDS}/${CRD_NAME}`)).body;
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
  change(spec);
  const res = await ts.json("PUT", `${CRDS}/${CRD_NAME}`, { body: crd });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  // The new schema is live once the served OpenAPI document shows it.
  const want = JSON.stringify(spec);
  await until(async () => {
    const doc = await ts.json("GET", "/openapi/v3/apis/ssa.example.com/v1");
    const schemas = Object.values(doc.body?.components?.schemas ?? {}) as any[];
    return schemas.some((s) => JSON.stringify(s?.properties?.spec?.properties) === want);
  }, "the new schema");
}
