import { assertEquals } from "../../tests/assert.ts";
import { syncFileSystem } from "./fsutil.ts";

Deno.test("a whole file system is synced by coreutils' sync; without it the caller is told", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/a`, "written");
  assertEquals(await syncFileSystem(dir), true);
  // A program that is not there, and one that fails (as `sync` does on an I/O error).
  assertEquals(await syncFileSystem(dir, `${dir}/no-such-sync`), false);
  assertEquals(await syncFileSystem(dir, "false"), false);
  // A path that is not there: `sync -f` cannot open it.
  assertEquals(await syncFileSystem(`${dir}/missing`), false);
  await Deno.remove(dir, { recursive: true });
});
