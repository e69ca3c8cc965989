import assert from "node:assert/strict";
import {
  decodeSegment,
  encodeSegment,
  keyToPath,
  MAX_PATH_CHARS,
  MAX_SEGMENT_CHARS,
} from "./keypath.ts";

/** Every property a path handed to the file system must have. */
function assertSafe(key: string): string {
  const path = keyToPath(key);
  const parts = path.split("/");
  for (const part of parts) {
    assert.ok(part.length > 0, `empty component in ${path} (key ${JSON.stringify(key)})`);
    assert.notEqual(part, ".");
    assert.notEqual(part, "..");
    assert.ok(!part.startsWith("."), `hidden component ${part}`);
    assert.ok(new TextEncoder().encode(part).length <= 255, `component too long: ${part.length}`);
  }
  assert.ok(!path.startsWith("/"), "absolute path");
  assert.ok(/^[a-z0-9_%\-/A-F.]+$/.test(path), `unexpected character in ${path}`);
  assert.ok(!path.includes("\\") && !path.includes("\0"));
  assert.ok(path.endsWith(".json"));
  assert.equal(path.indexOf("."), path.length - 5, "the only dot is the suffix");
  assert.ok(path.length <= MAX_PATH_CHARS + 80);
  return path;
}

Deno.test("keyToPath keeps ordinary keys readable", () => {
  assert.equal(
    keyToPath("/registry/core/pods/default/web-0"),
    "%/registry/core/pods/default/web-0.json",
  );
  assert.equal(
    keyToPath("/registry/certificates.platform.io/certificatesigningrequests/csr-1"),
    "%/registry/certificates%2Eplatform%2Eio/certificatesigningrequests/csr-1.json",
  );
});

Deno.test("keyToPath never escapes its directory", () => {
  const hostile = [
    "/registry/core/pods/../../../etc/passwd",
    "/registry/core/pods/ns/..",
    "/registry/core/pods/ns/.",
    "..",
    ".",
    "",
    "/",
    "//",
    "/a//b",
    "/a/b/",
    "/registry/core/pods/ns/.hidden",
    "/registry/core/pods/ns/a\\..\\..\\b",
    "/registry/core/pods/ns/a\0b",
    "/registry/core/pods/ns/%2E%2E",
    "/registry/core/pods/ns/CON",
    "/registry/core/pods/ns/nul",
    "/registry/core/pods/ns/" + "x".repeat(5000),
    "/registry/core/pods/ns/" + "\u00e9".repeat(300),
    "/registry/core/pods/ns/\ud800",
    "/" + "a/".repeat(2000),
    "~/x",
    "C:\\Windows",
  ];
  for (const key of hostile) assertSafe(key);
  assert.equal(keyToPath("/a/.."), "%/a/%2E%2E.json");
  assert.equal(keyToPath("/a/nul"), "%/a/%6Eul.json");
});

Deno.test("keyToPath has no collisions, also under case folding", () => {
  const keys = new Set<string>();
  const alphabet = [
    "a",
    "A",
    ".",
    "/",
    "%",
    "%2E",
    "e",
    "E",
    "2",
    "_",
    "-",
    "\u00e9",
    "\u00c9",
    "\ud83d\ude00",
    "\ud800",
    "\ufffd",
    " ",
    "\0",
    "con",
    "..",
    "json",
    ".json",
  ];
  // Every string of up to 3 alphabet pieces, each with and without a leading slash.
  const build = (prefix: string, depth: number) => {
    keys.add(prefix);
    keys.add("/" + prefix);
    if (depth === 0) return;
    for (const p of alphabet) build(prefix + p, depth - 1);
  };
  build("", 3);
  // Long segments that share their first 64 characters, and near-identical long keys.
  for (let i = 0; i < 50; i++) keys.add(`/r/${"s".repeat(300)}${i}`);
  for (let i = 0; i < 50; i++) keys.add(`/r/${"s".repeat(300)}${i}/x`);
  for (let i = 0; i < 50; i++) keys.add(`${"/abc".repeat(400)}${i}`);
  const seen = new Map<string, string>();
  const folded = new Map<string, string>();
  for (const key of keys) {
    const path = assertSafe(key);
    const other = seen.get(path);
    assert.ok(
      other === undefined,
      `${JSON.stringify(key)} and ${JSON.stringify(other)} -> ${path}`,
    );
    seen.set(path, key);
    const f = path.toLowerCase();
    assert.ok(!folded.has(f), `case-folding collision: ${path} vs ${folded.get(f)}`);
    folded.set(f, path);
  }
  assert.ok(seen.size > 20_000);
});

Deno.test("keyToPath: a file never shares a name with a directory", () => {
  // "/a/b" is a file next to the directory of "/a/b/c".
  const file = keyToPath("/a/b");
  const dirOfChild = keyToPath("/a/b/c").split("/").slice(0, -1).join("/");
  assert.notEqual(file, dirOfChild);
  const paths = ["/a/b", "/a/b/c", "/a/b.json", "/a/b.json/c"].map(keyToPath);
  const dirs = new Set(paths.flatMap((p) => {
    const parts = p.split("/");
    return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join("/"));
  }));
  for (const p of paths) assert.ok(!dirs.has(p), `${p} is also a directory`);
});

Deno.test("encodeSegment is reversible below the hashing threshold", () => {
  for (const s of ["", "abc", "A.b/c%d", "caf\u00e9", "\u{1f600}", "con", "a b", "x".repeat(60)]) {
    assert.equal(decodeSegment(encodeSegment(s)), s);
  }
  const long = encodeSegment("q".repeat(1000));
  assert.ok(long.length <= MAX_SEGMENT_CHARS);
  assert.match(long, /^q{64}%%[0-9a-f]{64}$/);
  assert.throws(() => decodeSegment(long));
  // The cut never splits an escape.
  const escaped = encodeSegment(".".repeat(100));
  assert.match(escaped, /^(%2E)+%%[0-9a-f]{64}$/);
});
