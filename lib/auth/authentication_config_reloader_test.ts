import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePki } from "../certificates/pki.ts";
import { ConfigError } from "../config/mod.ts";
import { createLogger } from "../api/log.ts";
import type { UserInfo } from "../api/user.ts";
import { AuthenticationConfigReloader } from "./authentication_config_reloader.ts";
import { Issuer, type Json, now, sign, signingKey } from "./oidc_issuer_testdata.ts";

/** Writes like an editor that saves through a temporary file and a rename. */
async function replaceFile(path: string, doc: Json | string) {
  const tmp = `${path}.tmp`;
  await Deno.writeTextFile(tmp, typeof doc === "string" ? doc : JSON.stringify(doc));
  await Deno.rename(tmp, path);
}

/** Polls `probe` until it returns true (5s at most). */
async function eventually(probe: () => boolean | Promise<boolean>, what: string) {
  const deadline = Date.now() + 5000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("the authentication config reloads valid versions and keeps the old on errors", async () => {
  const dir = await Deno.makeTempDir();
  const lines: string[] = [];
  const logger = createLogger("info", (line) => lines.push(line));
  const pki = await ensurePki({ dataDir: dir, sans: [], bindAddress: "127.0.0.1", logger });
  await using first = new Issuer(pki);
  await using second = new Issuer(pki);
  const key = await signingKey("ES256", "k1");
  first.keys = second.keys = [key];

  const config = (issuer: Issuer, prefix: string, anonymous?: Json): Json => ({
    apiVersion: "apiserver.platform.io/v1beta1",
    kind: "AuthenticationConfiguration",
    jwt: [{
      issuer: { url: issuer.url, audiences: ["platform"], certificateAuthority: pki.caCertPem },
      claimMappings: { username: { claim: "sub", prefix } },
    }],
    ...(anonymous ? { anonymous } : {}),
  });
  const path = join(dir, "auth.yaml");
  await replaceFile(path, config(first, "a:"));

  const reloader = await AuthenticationConfigReloader.start({ path, logger, pollIntervalMs: 10 });
  const userOf = async (issuer: Issuer): Promise<UserInfo | undefined> => {
    const token = await sign(key, {
      iss: issuer.url,
      aud: "platform",
      sub: "alice",
      exp: now() + 300,
    });
    return await reloader.authenticate(
      new Request("https://platform.example/", { headers: { Authorization: `Bearer ${token}` } }),
    );
  };
  try {
    assert.equal((await userOf(first))?.username, "a:alice");
    assert.equal(await userOf(second), undefined);
    assert.equal(reloader.anonymousAllowed("/livez"), false);

    // A valid new version: new issuer, new prefix, anonymous for one path.
    await replaceFile(
      path,
      config(second, "b:", { enabled: true, conditions: [{ path: "/livez" }] }),
    );
    await eventually(async () => (await userOf(second))?.username === "b:alice", "the reload");
    assert.equal(await userOf(first), undefined);
    assert.equal(reloader.anonymousAllowed("/livez"), true);
    assert.equal(reloader.anonymousAllowed("/api"), false);
    assert.ok(lines.some((l) => l.includes(`authentication config ${path} reloaded`)));

    // An invalid version: one error line naming file and field; the old config stays.
    const invalid = config(first, "c:");
    (invalid.jwt as Json[])[0].issuer = { url: "http://insecure.example.com", audiences: ["p"] };
    await replaceFile(path, invalid);
    const errorLine = (l: string) => l.includes("ERROR") && l.includes("not reloaded");
    await eventually(() => lines.some(errorLine), "the error line");
    const errors = lines.filter(errorLine);
    assert.equal(errors.length, 1);
    assert.ok(
      errors[0].includes(
        `${path}: jwt[0].issuer.url: Invalid value: "http://insecure.example.com": URL scheme ` +
          "must be https",
      ),
      errors[0],
    );
    assert.equal((await userOf(second))?.username, "b:alice");
    assert.equal(reloader.anonymousAllowed("/livez"), true);
    // The same invalid content is not reported again.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(lines.filter(errorLine).length, 1);

    // A missing file is one error too; the old config stays.
    await Deno.remove(path);
    await eventually(() => lines.filter(errorLine).length === 2, "the missing-file error");
    assert.ok(lines.filter(errorLine)[1].includes("No such file or directory"));
    assert.equal((await userOf(second))?.username, "b:alice");

    // Fixed again: applies.
    await replaceFile(path, config(first, "d:"));
    await eventually(async () => (await userOf(first))?.username === "d:alice", "the fix");
    assert.equal(reloader.anonymousAllowed("/livez"), false);
  } finally {
    reloader.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an invalid file, or anonymous with --anonymous-auth, stops the start", async () => {
  const dir = await Deno.makeTempDir();
  const logger = createLogger("error", () => {});
  const path = join(dir, "auth.yaml");
  try {
    await assert.rejects(
      () => AuthenticationConfigReloader.start({ path, logger }),
      (err) => err instanceof ConfigError && err.message.includes("cannot read"),
    );
    await replaceFile(path, { apiVersion: "apiserver.platform.io/v1beta1", kind: "Nope" });
    await assert.rejects(
      () => AuthenticationConfigReloader.start({ path, logger }),
      (err) => err instanceof ConfigError && err.message.startsWith(`${path}: kind:`),
    );
    const withAnonymous = {
      apiVersion: "apiserver.platform.io/v1beta1",
      kind: "AuthenticationConfiguration",
      anonymous: { enabled: true },
    };
    await replaceFile(path, withAnonymous);
    await assert.rejects(
      () => AuthenticationConfigReloader.start({ path, logger, anonymousFlagSet: true }),
      (err) => err instanceof ConfigError && err.message.includes("--anonymous-auth flag"),
    );
    const ok = await AuthenticationConfigReloader.start({ path, logger });
    assert.equal(ok.anonymousAllowed("/anything"), true);
    assert.deepEqual(ok.config.jwt, []);
    ok.stop();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
