/**
 * The `compile` task builds one binary: every module the server starts as a thread
 * (`new Worker(new URL("./x.ts", import.meta.url))`) must be named with `--include`, as
 * `deno compile` does not follow those URLs, and a binary without one fails when the thread
 * starts (the object file writer, the trace exporter).
 */

import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) yield* sources(path);
    else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) yield path;
  }
}

Deno.test("compile task: every worker module of lib/ is included in the binary", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(root, "deno.json")));
  const words: string[] = config.tasks.compile.split(/\s+/);
  const included = new Set(words.filter((_, i) => words[i - 1] === "--include"));
  const workers: string[] = [];
  for await (const file of sources(join(root, "lib"))) {
    const text = await Deno.readTextFile(file);
    for (const m of text.matchAll(/new Worker\(\s*new URL\("(\.[^"]+)", import\.meta\.url\)/g)) {
      workers.push(relative(root, join(dirname(file), m[1])));
    }
  }
  assert.ok(workers.length >= 4, `found only ${workers.join(", ")}`);
  for (const w of workers) {
    assert.ok(included.has(w), `${w} is not --include'd in the compile task`);
    await Deno.stat(join(root, w));
  }
});
