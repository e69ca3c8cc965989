/**
 * The admin credentials and server secrets kept beside the PKI under `<dataDir>/pki/`: the
 * admin bearer token (`admin.token`) and the key that signs continue tokens
 * (`continue.key`). Each is a random 32-byte secret (base64url), made on first use and
 * written atomically with mode 0600.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { writeFileAtomic } from "../storage/mod.ts";
import { readIfExists } from "./pki.ts";

/**
 * The admin bearer token (user {@link ADMIN_USER}, group {@link ADMIN_GROUP}): read from
 * `<dataDir>/pki/admin.token`, or made on first call (32 random bytes, base64url) and
 * written there with mode 0600.
 */
export function ensureAdminToken(dataDir: string): Promise<string> {
  return ensureSecret(join(dataDir, "pki", "admin.token"));
}

/**
 * The key that signs continue tokens (`<dataDir>/pki/continue.key`, generated on first use),
 * so that a paged list can continue after a restart.
 */
export async function ensureContinueKey(dataDir: string): Promise<Uint8Array> {
  return new TextEncoder().encode(await ensureSecret(join(dataDir, "pki", "continue.key")));
}

/** A random 32-byte secret (base64url) kept in `path` (0600), made on first use. */
async function ensureSecret(path: string): Promise<string> {
  const existing = (await readIfExists(path))?.trim();
  if (existing) return existing;
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const secret = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, secret + "\n", { mode: 0o600 });
  return secret;
}
