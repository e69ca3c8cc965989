/**
 * Extracts the built-in schemas from Kubernetes' published OpenAPI v3 documents into
 * `lib/schema/builtin_schemas.json`, the data the server validates, prunes, patches and
 * documents objects with.
 *
 *     deno task schemas [openapi-dir] [output-file]
 *
 * `openapi-dir` defaults to `../shared/conformance/openapi` (the checkout beside this repo);
 * `output-file` defaults to `lib/schema/builtin_schemas.json`. Only this tool reads
 * `../shared`: it regenerates a checked-in file. The tests use the committed `builtin_schemas.json` and
 * the four documents they compare with in `testdata/k8s-openapi` (not the full set this tool
 * needs).
 *
 * What it does:
 * - collects `components.schemas` of every `*.json` document in the directory into one object
 *   keyed by schema name (`io.k8s.api.core.v1.ConfigMap`, …). Schema names are kept as
 *   they are; `paths` are not copied (the server generates its own routes);
 * - renames API groups ending in `k8s.io` to end in `platform.io` inside
 *   `x-kubernetes-group-version-kind` entries; descriptions are left untouched;
 * - deduplicates the shared apimachinery types: the body of a schema comes from the newest
 *   document that has it (the core document first, see {@link documentOrder}), and the
 *   `x-kubernetes-group-version-kind` lists of all documents are merged (sorted, no repeats);
 * - adds, last, the documents in `tools/openapi_supplement/`: schemas of kinds the server serves
 *   that the source documents lack (the core document is a trimmed copy without Service). They
 *   fill gaps only: a schema a source document has keeps the source's body;
 * - writes compact JSON with sorted schema names, so that reruns produce identical bytes.
 */

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

// deno-lint-ignore no-explicit-any
type Json = any;

interface GVK {
  group: string;
  version: string;
  kind: string;
}

const GVK_KEY = "x-kubernetes-group-version-kind";

/** `certificates.k8s.io` -> `certificates.platform.io`; other groups are unchanged. */
export function renameGroup(group: string): string {
  if (group === "k8s.io") return "platform.io";
  return group.endsWith(".k8s.io") ? `${group.slice(0, -".k8s.io".length)}.platform.io` : group;
}

/**
 * The order in which documents are merged: the core document (`api__v1…`) first, because it is
 * the newest of the set (see the directory's README), then the group documents by file name.
 * The first document that carries a schema provides its body.
 */
export function documentOrder(files: string[]): string[] {
  const rank = (f: string) => (basename(f).startsWith("api__") ? 0 : 1);
  return [...files].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function renameGVKs(list: Json): GVK[] {
  if (!Array.isArray(list)) return [];
  return list.map((g: GVK) => ({
    group: renameGroup(String(g.group ?? "")),
    kind: String(g.kind),
    version: String(g.version),
  }));
}

function gvkKey(g: GVK): string {
  return `${g.group}\u0000${g.version}\u0000${g.kind}`;
}

function compareGVK(a: GVK, b: GVK): number {
  const ka = gvkKey(a), kb = gvkKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** Renames the groups of every GVK list found anywhere in `node` (in place). */
function renameAll(node: Json): void {
  if (Array.isArray(node)) {
    for (const item of node) renameAll(item);
    return;
  }
  if (node === null || typeof node !== "object") return;
  for (const [key, value] of Object.entries(node)) {
    if (key === "description") continue;
    if (key === GVK_KEY) {
      node[key] = renameGVKs(value).sort(compareGVK);
      continue;
    }
    renameAll(value);
  }
}

/** Merges the schemas of several OpenAPI v3 documents (see the module comment). */
export function mergeDocuments(docs: { name: string; doc: Json }[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const { name, doc } of docs) {
    const schemas = doc?.components?.schemas;
    if (!schemas || typeof schemas !== "object") {
      throw new Error(`${name}: no components.schemas`);
    }
    for (const [schemaName, schema] of Object.entries<Json>(schemas)) {
      const copy = structuredClone(schema);
      renameAll(copy);
      const existing = out[schemaName];
      if (!existing) {
        out[schemaName] = copy;
        continue;
      }
      // Same type from an older document: keep the body, merge the GVK lists.
      const extra: GVK[] = copy[GVK_KEY] ?? [];
      if (extra.length === 0) continue;
      const merged = new Map<string, GVK>();
      for (const g of [...(existing[GVK_KEY] ?? []), ...extra]) merged.set(gvkKey(g), g);
      existing[GVK_KEY] = [...merged.values()].sort(compareGVK);
    }
  }
  const sorted: Record<string, Json> = {};
  for (const key of Object.keys(out).sort()) sorted[key] = out[key];
  return sorted;
}

/** Checks that every `$ref` points at a schema of the set; returns the dangling ones. */
export function danglingRefs(schemas: Record<string, Json>): string[] {
  const missing = new Set<string>();
  const walk = (node: Json) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== "object") return;
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") {
        const name = value.replace(/^#\/components\/schemas\//, "");
        if (!(name in schemas)) missing.add(value);
      } else if (key !== "description") {
        walk(value);
      }
    }
  };
  walk(schemas);
  return [...missing].sort();
}

/** Documents with the schemas the source documents lack (see the module comment). */
const SUPPLEMENT = "tools/openapi_supplement";

function main(args: string[]): void {
  const dir = args[0] ?? "../shared/conformance/openapi";
  const outFile = args[1] ?? "lib/schema/builtin_schemas.json";
  const files = documentOrder(
    readdirSync(dir).filter((f) => f.endsWith(".json")).map((f) => join(dir, f)),
  );
  if (files.length === 0) throw new Error(`no *.json documents in ${dir}`);
  files.push(
    ...readdirSync(SUPPLEMENT).filter((f) => f.endsWith(".json")).sort().map((f) =>
      join(SUPPLEMENT, f)
    ),
  );
  const docs = files.map((f) => ({ name: basename(f), doc: JSON.parse(readFileSync(f, "utf8")) }));
  const schemas = mergeDocuments(docs);
  const dangling = danglingRefs(schemas);
  if (dangling.length) throw new Error(`dangling $ref: ${dangling.join(", ")}`);
  const text = JSON.stringify(schemas) + "\n";
  writeFileSync(outFile, text);
  console.log(
    `${outFile}: ${Object.keys(schemas).length} schemas from ${files.length} documents, ` +
      `${text.length} bytes`,
  );
}

if (import.meta.main) main(Deno.args);
