/**
 * A bad `--egress-selector-config-file` as the operator meets it: `platform serve` exits 2
 * with one line naming the file and the field path, before serving; `platform check-config`
 * reports the same, and accepts a good file (printing the deprecation of `master`).
 */

import { join } from "node:path";
import { assertEquals, assertMatch } from "./assert.ts";
import { assertConfigError, runPlatform } from "./harness.ts";
import { egressConfigFile, viaProxy } from "./egress_testdata.ts";

Deno.test("egress config: a file that cannot work stops serve and check-config with the field path (exit 2)", async () => {
  await using egress = await egressConfigFile({
    cluster: { proxyProtocol: "GRPC", transport: { tcp: { url: "http://127.0.0.1:1" } } },
  });
  const expected = new RegExp(
    `^platform: ${egress.path}: egressSelections\\[0\\]\\.connection\\.transport\\.tcp: ` +
      "the GRPC protocol is not supported over tcp: use uds$",
  );
  for (const command of ["serve", "check-config"]) {
    const run = await runPlatform(
      command,
      "--storage",
      "memory",
      "--data-dir",
      join(egress.dir, "data"),
      "--secure-port",
      "0",
      "--egress-selector-config-file",
      egress.path,
    );
    assertConfigError(run, expected);
  }
  assertConfigError(
    await runPlatform("check-config", "--egress-selector-config-file", "/nonexistent/e.yaml"),
    /--egress-selector-config-file/,
  );
});

Deno.test("egress config: check-config accepts the README's example and the deprecated master", async () => {
  const example = new URL("../config/egress-selector.yaml", import.meta.url).pathname;
  const ok = await runPlatform("check-config", "--egress-selector-config-file", example);
  assertEquals([ok.code, ok.stdout.trim()], [0, "configuration is valid"], ok.stderr);
  await using egress = await egressConfigFile({
    master: viaProxy({ url: "http://127.0.0.1:3128" }),
  });
  const run = await runPlatform("check-config", "--egress-selector-config-file", egress.path);
  assertEquals(run.code, 0, run.stderr);
  assertMatch(
    run.stderr,
    /egressSelections\[0\]\.name: "master" is deprecated, use "controlplane"/,
  );
});
