/**
 * The layering of lib/ (lib/README.md): a folder imports only folders of lower layers, and
 * only through their `mod.ts`. Strictly lower layers also mean the folder graph has no cycle.
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const LIB = fileURLToPath(new URL(".", import.meta.url));

/** Each folder's layer, bottom (0) to top; the same as in lib/README.md. A new folder gets
 * one here before it can be imported. */
export const LAYERS: Record<string, number> = {
  api: 0,
  grpc: 0,
  egress: 1,
  kubeconfig: 1,
  metrics: 1,
  tracing: 1,
  cel: 2,
  config: 2,
  schema: 2,
  storage: 2,
  apply: 3,
  audit: 3,
  codec: 3,
  encryption: 3,
  patch: 3,
  auth: 4,
  printers: 4,
  admission: 5,
  client: 5,
  registry: 6,
  apiextensions: 7,
  certificates: 7,
  rbac: 7,
  resources: 8,
  controllers: 9,
  server: 10,
  cli: 10,
};

interface Import {
  file: string;
  from: string;
  to: string;
  /** The imported path, relative to lib/. */
  target: string;
}

async function* sourceFiles(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) yield* sourceFiles(path);
    // Tests, their fixtures (`*_testdata.ts`) and benchmarks may import anything.
    else if (e.name.endsWith(".ts") && !/_(test|testdata|bench)\.ts$/.test(e.name)) yield path;
  }
}

/** Every import or re-export of another lib/ folder by a non-test module. */
async function crossFolderImports(): Promise<Import[]> {
  const out: Import[] = [];
  const specifier = /\b(?:import|export)\b[^;'"]*?\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g;
  for await (const path of sourceFiles(LIB)) {
    const file = relative(LIB, path);
    const from = file.split("/")[0];
    if (!file.includes("/")) continue; // this test and other files at lib/ itself
    const text = await Deno.readTextFile(path);
    for (const m of text.matchAll(specifier)) {
      const target = relative(LIB, join(path, "..", m[1]));
      const to = target.split("/")[0];
      if (to !== from && !target.startsWith("..")) out.push({ file, from, to, target });
    }
  }
  return out;
}

const imports = await crossFolderImports();

Deno.test("layering: every folder under lib/ has a layer", async () => {
  const folders: string[] = [];
  for await (const e of Deno.readDir(LIB)) if (e.isDirectory) folders.push(e.name);
  assert.deepEqual(folders.filter((f) => LAYERS[f] === undefined), []);
  // The test reads something: a change that broke the import parser would pass silently.
  assert.ok(imports.length > 100, `only ${imports.length} cross-folder imports found`);
});

Deno.test("layering: folders import only lower layers", () => {
  const upward = new Map<string, string[]>();
  for (const i of imports) {
    if (LAYERS[i.to] < LAYERS[i.from]) continue;
    const pair = `${i.from} -> ${i.to}`;
    upward.set(pair, [...(upward.get(pair) ?? []), `${i.file} imports ${i.target}`]);
  }
  assert.deepEqual(
    [...upward].map(([pair, where]) => `${pair}: ${where.join("; ")}`),
    [],
    "imports that point up a layer (move the shared piece down instead)",
  );
});

Deno.test("layering: other folders come in through mod.ts", () => {
  const inner = imports.filter((i) => i.target !== `${i.to}/mod.ts`);
  assert.deepEqual(
    inner.map((i) => `${i.file} imports ${i.target}`),
    [],
    "imports past another folder's mod.ts (export it from there)",
  );
});
