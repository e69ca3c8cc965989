/**
 * The V8 flags the server runs with are the same in the `start` task, the compiled binary and
 * the bench's servers, and this Deno accepts them (an unknown flag stops `deno run`).
 */

import assert from "node:assert/strict";
import { SERVER_V8_FLAGS } from "../bench/harness.ts";

const root = new URL("..", import.meta.url);

Deno.test("V8 flags: deno.json's start and compile tasks give the bench's flags", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  assert.ok(SERVER_V8_FLAGS.length > 0);
  for (const task of ["start", "compile"]) {
    const words: string[] = config.tasks[task].split(/\s+/);
    for (const flag of SERVER_V8_FLAGS) {
      assert.ok(words.includes(flag), `the ${task} task lacks ${flag}: ${config.tasks[task]}`);
    }
  }
});

Deno.test("V8 flags: this Deno takes them", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", ...SERVER_V8_FLAGS, "console.log('ran')"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, err);
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "ran");
  assert.doesNotMatch(err, /did not recognize|unrecognized|unknown flag/i);
});
