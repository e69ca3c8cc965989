/**
 * Shared by the `platform storage` tests: the command run as a user runs it, killed if it
 * outlives its time bound.
 */

import type { PlatformRun } from "./harness.ts";

/** Runs `deno run --allow-all main.ts <args>`; killed (and the test fails) after `ms`. */
export async function runWithin(ms: number, ...args: string[]): Promise<PlatformRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../main.ts", import.meta.url).pathname, ...args],
    stdin: "null",
    signal: AbortSignal.timeout(ms),
  }).output();
  const dec = new TextDecoder();
  if (out.signal) throw new Error(`platform ${args.join(" ")}: killed after ${ms} ms`);
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** An EncryptionConfiguration (aesgcm for secrets) written into `dir`; its path. */
export async function encryptionConfig(dir: string): Promise<string> {
  const path = `${dir}/encryption.json`;
  const secret = btoa("0123456789abcdef0123456789abcdef");
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "EncryptionConfiguration",
      resources: [{
        resources: ["secrets"],
        providers: [{ aesgcm: { keys: [{ name: "key1", secret }] } }, { identity: {} }],
      }],
    }),
  );
  return path;
}
