/**
 * Test fixtures for the server configuration's tests: testdata/config, a temporary directory,
 * loading flags (and the file they name) from a directory, the message of the ConfigError it
 * throws, and writing a configuration file.
 *
 * @module
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "./config_error.ts";
import { loadServerConfig } from "./server_config.ts";
import type { ServerConfig } from "./server_config_fields.ts";

export const TESTDATA = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "testdata",
  "config",
);

export async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "server_config_test_" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

export async function load(argv: string[], cwd: string): Promise<ServerConfig> {
  const cfg = await loadServerConfig(argv, { cwd });
  assert(!("help" in cfg), "unexpected help");
  return cfg;
}

/** The message of the ConfigError that loading `argv` throws. */
export async function errorOf(argv: string[], cwd: string): Promise<string> {
  try {
    await loadServerConfig(argv, { cwd });
  } catch (err) {
    assert(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    assert(!err.message.includes("\n"), `message is one line: ${err.message}`);
    return err.message;
  }
  throw new assert.AssertionError({ message: `loading ${argv.join(" ")} did not fail` });
}

export async function writeConfig(dir: string, name: string, body: string): Promise<string> {
  await Deno.writeTextFile(
    join(dir, name),
    `apiVersion: platform.io/v1alpha1\nkind: ServerConfiguration\n${body}`,
  );
  return name;
}
